import type { ClaimCheck } from "../claim-check/claim-check.js";

/** How `enqueue` and `enqueueWith` treat the events they are given. */
export interface EnqueueOptions {
  /**
   * Where a payload goes when its message would be over SNS's 256 KiB (the claim check): the
   * payload is stored there, inside your transaction and before the outbox row is written, and the
   * message carries a pointer in the format of AWS's extended clients instead. Without it, such an
   * event is refused.
   */
  readonly claimCheck?: ClaimCheck;
}
