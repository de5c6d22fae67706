import type { ClaimCheck } from "./claim-check.js";
import {
  EXTENDED_PAYLOAD_SIZE_ATTRIBUTE,
  encodePointer,
  PAYLOAD_SIZE_ATTRIBUTES,
  type PayloadPointer,
} from "./payload-pointer.js";

/** A payload to store before its row is written. */
export interface ClaimedPayload {
  readonly pointer: PayloadPointer;
  readonly payloadJson: string;
}

/** The message an oversized payload becomes: the pointer as its body, its size as an attribute. */
export interface ClaimedMessage {
  readonly json: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly claimed: ClaimedPayload;
}

/**
 * Why these caller-given headers cannot travel, or `undefined`: the extended clients' attribute
 * names mark an offloaded message, so a header of that name would make every reader fetch an
 * object that does not exist (their own clients refuse them too).
 */
export function reservedHeaderProblem(headers: Readonly<Record<string, string>>): string | undefined {
  const reserved = PAYLOAD_SIZE_ATTRIBUTES.find((name) => Object.hasOwn(headers, name));
  return reserved === undefined
    ? undefined
    : `header name "${reserved}" is reserved: it marks a claim-checked message`;
}

/** `payloadJson` put behind the claim check: what the outbox row stores instead, and what to upload. */
export function claimedMessage(
  claimCheck: ClaimCheck,
  payloadJson: string,
  headers: Readonly<Record<string, string>>,
): ClaimedMessage {
  const pointer = claimCheck.pointerFor(payloadJson);
  return {
    json: encodePointer(pointer),
    headers: { ...headers, [EXTENDED_PAYLOAD_SIZE_ATTRIBUTE]: String(Buffer.byteLength(payloadJson)) },
    claimed: { pointer, payloadJson },
  };
}

/**
 * Stores the claimed payloads, one object per event, all at once: each call is bounded by the
 * claim check itself.
 */
export async function storeClaimed(
  claimCheck: ClaimCheck,
  claimed: readonly ClaimedPayload[],
): Promise<void> {
  await Promise.all(claimed.map((entry) => claimCheck.put(entry.pointer, entry.payloadJson)));
}
