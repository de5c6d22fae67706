/** Why a message was quarantined, as the `poison_reason` attribute and a metric label. */
export type PoisonKind =
  | "body_not_json"
  | "not_an_envelope"
  | "topic_not_allowed"
  | "envelope_message_not_json"
  | "missing_event_id"
  | "invalid_event_id"
  | "missing_event_type"
  | "wrong_attribute_type"
  | "unknown_event_type"
  | "payload_rejected"
  | "rejected_by_handler"
  | "handler_left_transaction"
  | "invalid_claim_pointer"
  | "claim_check_not_configured"
  | "claim_check_bucket_not_allowed"
  | "claimed_payload_missing"
  | "claimed_payload_too_large"
  | "claimed_payload_size_mismatch"
  | "claimed_payload_not_json";

/**
 * The most characters of a message's own content (an id, an event type, a parse or handler error)
 * that go into a log line or the DLQ's `poison_reason`: a message carries up to 256 KiB, all of it
 * possibly an attacker's.
 */
export const MAX_ECHOED_CHARS = 1_000;

/** `text`, cut to MAX_ECHOED_CHARS with its full length said (`…… (204800 chars)`). */
export function echoed(text: string): string {
  if (text.length <= MAX_ECHOED_CHARS) return text;
  // Not between the halves of a surrogate pair: a lone half is not text SQS accepts.
  const lastCode = text.charCodeAt(MAX_ECHOED_CHARS - 1);
  const end = lastCode >= 0xd800 && lastCode <= 0xdbff ? MAX_ECHOED_CHARS - 1 : MAX_ECHOED_CHARS;
  return `${text.slice(0, end)}… (${text.length} chars)`;
}

export class PoisonReason {
  /** Capped (echoed): what the message itself says goes last in it, so the cut keeps the explanation. */
  readonly detail: string;

  constructor(
    readonly kind: PoisonKind,
    detail: string,
  ) {
    this.detail = echoed(detail);
  }

  toString(): string {
    return `${this.kind}: ${this.detail}`;
  }
}

/** The drain ran out of time while the message was in flight: rolled back and released, not failed. */
export class DrainExpiredError extends Error {
  override readonly name = "DrainExpiredError";
}

/** `createConsumer` was given an option the daemon would refuse in its CONSUMER_… form. */
export class ConsumerOptionsError extends Error {
  override readonly name = "ConsumerOptionsError";
}
