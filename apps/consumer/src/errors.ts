/** Why a message was quarantined, as the `poison_reason` attribute and a metric label. */
export type PoisonKind =
  | "body_not_json"
  | "envelope_message_not_json"
  | "missing_event_id"
  | "invalid_event_id"
  | "missing_event_type"
  | "wrong_attribute_type"
  | "unknown_event_type"
  | "payload_rejected"
  | "rejected_by_handler";

export class PoisonReason {
  constructor(
    readonly kind: PoisonKind,
    readonly detail: string,
  ) {}

  toString(): string {
    return `${this.kind}: ${this.detail}`;
  }
}

/** The drain ran out of time while the message was in flight: rolled back and given back, not failed. */
export class DrainExpiredError extends Error {
  override readonly name = "DrainExpiredError";
}

/** `createConsumer` was given an option the daemon would refuse in its CONSUMER_… form. */
export class ConsumerOptionsError extends Error {
  override readonly name = "ConsumerOptionsError";
}
