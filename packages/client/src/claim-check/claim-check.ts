import type { PayloadPointer } from "./payload-pointer.js";

/**
 * Where `enqueue` puts a payload too large for a message (the claim check): an S3 bucket in practice
 * (`S3ClaimCheck`, from `@outbox/client/claim-check`), behind this interface so the main entry point
 * needs no AWS SDK.
 */
export interface ClaimCheck {
  /**
   * A pointer for one event's payload, never returned before: objects are not shared, since a
   * consumer may delete its object once it has processed the event. Computed, no I/O.
   */
  pointerFor(payloadJson: string): PayloadPointer;
  /**
   * Writes `payloadJson` at `pointer`; resolves once it is stored. Each call is bounded by the
   * implementation: `enqueue` awaits it inside the caller's transaction.
   */
  put(pointer: PayloadPointer, payloadJson: string): Promise<void>;
}
