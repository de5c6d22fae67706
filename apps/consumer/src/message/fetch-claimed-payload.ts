import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { Deadline } from "@outbox/client";
import { pointerUri } from "@outbox/client/internal";
import { missingObjectCode } from "@outbox/shared";
import { PoisonReason } from "../errors.js";
import type { DecodedMessage } from "./decode.js";
import { parseJson } from "./parse-json.js";
import { readBoundedBody } from "./read-bounded-body.js";

/** Where claim-checked payloads are read from (CONSUMER_CLAIM_CHECK_BUCKET and its S3 client). */
export interface ClaimCheckReader {
  readonly s3: S3Client;
  /** The one bucket pointers may name: a message cannot make the consumer read anything else. */
  readonly bucket: string;
  /** CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS: the most one fetch takes of its message's deadline. */
  readonly fetchTimeoutMs: number;
  /** CONSUMER_CLAIM_CHECK_MAX_BYTES: the largest payload read; a larger one is poison, never read. */
  readonly maxPayloadBytes: number;
}

/** The fetch ran out of its own time (not the message's): retried later like any failure. */
export class ClaimedPayloadTimeoutError extends Error {
  override readonly name = "ClaimedPayloadTimeoutError";
}

/**
 * The message with its claim-checked payload in place, fetched from S3 under the message's
 * deadline (and at most CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS of it), or why it is poison: a
 * pointer we may not follow, a declared size over CONSUMER_CLAIM_CHECK_MAX_BYTES (no request), an
 * object whose size is not the declared one (told by its Content-Length, before the body is read,
 * and by the read itself, which stops one chunk past the declared size), an object that is gone
 * (deleted, or expired by the bucket's lifecycle: retrying cannot bring it back), a payload that is
 * not JSON. Whoever can write to the bucket or the queue cannot make a fetch hold more than the
 * bound. A message that is not claim-checked comes back as it is. Throws on what a retry may fix
 * (S3 unreachable, the time ran out): when the message's own deadline aborted, with its reason, so
 * a drain's expiry releases the message.
 */
export async function fetchClaimedPayload(
  reader: ClaimCheckReader | undefined,
  decoded: DecodedMessage,
  messageDeadline: Deadline,
): Promise<DecodedMessage | PoisonReason> {
  const pointer = decoded.claimed;
  if (pointer === undefined) return decoded;
  const uri = pointerUri(pointer);
  if (reader === undefined) {
    return new PoisonReason(
      "claim_check_not_configured",
      `the payload is at ${uri} and CONSUMER_CLAIM_CHECK_BUCKET is not set`,
    );
  }
  if (pointer.bucket !== reader.bucket) {
    return new PoisonReason(
      "claim_check_bucket_not_allowed",
      `the payload is at ${uri}, outside CONSUMER_CLAIM_CHECK_BUCKET (${reader.bucket})`,
    );
  }
  const declared = decoded.claimedBytes ?? 0;
  if (declared > reader.maxPayloadBytes) {
    return new PoisonReason(
      "claimed_payload_too_large",
      `${uri} is declared ${declared} bytes (ExtendedPayloadSize), over CONSUMER_CLAIM_CHECK_MAX_BYTES (${reader.maxPayloadBytes})`,
    );
  }
  const mismatch = (actual: string) =>
    new PoisonReason(
      "claimed_payload_size_mismatch",
      `${uri} is ${actual} bytes, its message declares ${declared} (ExtendedPayloadSize)`,
    );
  const deadline = Deadline.after(reader.fetchTimeoutMs, messageDeadline);
  let bytes: Buffer;
  try {
    const object = await reader.s3.send(new GetObjectCommand({ Bucket: pointer.bucket, Key: pointer.key }), {
      abortSignal: deadline.signal,
    });
    const body = object.Body as Parameters<typeof readBoundedBody>[0] | undefined;
    if (body === undefined) throw new Error(`GetObject ${uri} returned no body`);
    if (object.ContentLength !== undefined && object.ContentLength !== declared) {
      body.destroy();
      return mismatch(String(object.ContentLength));
    }
    const read = await readBoundedBody(body, declared, deadline);
    if (read.over) return mismatch(`more than ${declared} (${read.readBytes} read before the fetch stopped)`);
    if (read.bytes.byteLength !== declared) return mismatch(String(read.bytes.byteLength));
    bytes = read.bytes;
  } catch (error) {
    const missing = missingObjectCode(error);
    if (missing !== undefined) {
      return new PoisonReason("claimed_payload_missing", `no object at ${uri} (${missing})`);
    }
    if (messageDeadline.aborted) throw messageDeadline.signal.reason;
    if (deadline.aborted) {
      throw new ClaimedPayloadTimeoutError(
        `GetObject ${uri} did not finish within CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS (${reader.fetchTimeoutMs} ms)`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    deadline.dispose();
  }
  const payload = parseJson(bytes.toString("utf-8"));
  if (!payload.ok) return new PoisonReason("claimed_payload_not_json", `${uri}: ${payload.error}`);
  return { ...decoded, payload: payload.value };
}
