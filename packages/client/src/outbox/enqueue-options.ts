import type { ClaimCheck } from "../claim-check/claim-check.js";

/** What `enqueue` and `enqueueWith` take besides the events; every field is optional. */
export interface EnqueueOptions {
  /**
   * The largest SNS message (body and attributes, in bytes) an event may become: one number for
   * every topic, or per logical topic name (the `topic` field), topics not named getting SNS's
   * default of 262 144. Match it to the `MaximumMessageSize` of the SNS topic the relay maps the
   * topic to (1 024–1 048 576): an event over the real limit is accepted here and dies at the relay.
   */
  readonly maxMessageBytes?: number | Readonly<Record<string, number>>;
  /**
   * Where a payload goes when its message would be over its topic's limit (the claim check): the
   * payload is stored there, inside your transaction and before the outbox row is written, and the
   * message carries a pointer in the format of AWS's extended clients instead. Without it, such an
   * event is refused.
   */
  readonly claimCheck?: ClaimCheck;
}
