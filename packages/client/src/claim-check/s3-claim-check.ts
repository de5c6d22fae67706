import { randomUUID } from "node:crypto";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { Deadline } from "../deadline/deadline.js";
import { describeError } from "../log/describe-error.js";
import type { ClaimCheck } from "./claim-check.js";
import { type PayloadPointer, pointerUri } from "./payload-pointer.js";

export type { ClaimCheck } from "./claim-check.js";

/** What the default bound of one PutObject is: a 5 MiB payload over a slow link, not a hung endpoint. */
const DEFAULT_PUT_TIMEOUT_MS = 10_000;

export interface S3ClaimCheckOptions {
  /** Your S3 client (region, credentials; `forcePathStyle` for a local endpoint). */
  readonly s3: S3Client;
  readonly bucket: string;
  /** Prepended to every key, e.g. `"outbox/"`; default none. */
  readonly keyPrefix?: string;
  /** The most one PutObject may take, retries included; default 10 000 ms. */
  readonly putTimeoutMs?: number;
}

/** A PutObject that failed or ran out of time: `enqueue` rejects with it and writes no row. */
export class ClaimCheckError extends Error {
  override readonly name = "ClaimCheckError";
}

/**
 * The claim check on S3: each event's payload in an object of its own, under a fresh random UUID
 * after `keyPrefix`, as AWS's extended clients key theirs (`s3KeyPrefix + UUID.randomUUID()`). Never
 * shared: a consumer built on those clients deletes the object after processing (the Java SQS
 * client by default), which must not take another event's payload with it. The bucket's lifecycle
 * rule expires objects after the longest a pointer can live, which also removes those a rolled-back
 * transaction left unreferenced.
 */
export class S3ClaimCheck implements ClaimCheck {
  readonly #s3: S3Client;
  readonly #bucket: string;
  readonly #keyPrefix: string;
  readonly #putTimeoutMs: number;

  constructor(options: S3ClaimCheckOptions) {
    const putTimeoutMs = options.putTimeoutMs ?? DEFAULT_PUT_TIMEOUT_MS;
    if (!Number.isFinite(putTimeoutMs) || putTimeoutMs <= 0) {
      throw new RangeError(`putTimeoutMs must be a positive number of milliseconds, got ${putTimeoutMs}`);
    }
    if (options.bucket === "") throw new RangeError("bucket must not be empty");
    this.#s3 = options.s3;
    this.#bucket = options.bucket;
    this.#keyPrefix = options.keyPrefix ?? "";
    this.#putTimeoutMs = putTimeoutMs;
  }

  pointerFor(): PayloadPointer {
    return { bucket: this.#bucket, key: `${this.#keyPrefix}${randomUUID()}` };
  }

  async put(pointer: PayloadPointer, payloadJson: string): Promise<void> {
    const deadline = Deadline.after(this.#putTimeoutMs);
    try {
      await this.#s3.send(
        new PutObjectCommand({
          Bucket: pointer.bucket,
          Key: pointer.key,
          Body: payloadJson,
          ContentType: "application/json; charset=utf-8",
        }),
        { abortSignal: deadline.signal },
      );
    } catch (error) {
      const why = deadline.aborted
        ? `did not finish within ${this.#putTimeoutMs} ms`
        : `failed: ${describeError(error)}`;
      throw new ClaimCheckError(`PutObject ${pointerUri(pointer)} ${why}`, { cause: error });
    } finally {
      deadline.dispose();
    }
  }
}
