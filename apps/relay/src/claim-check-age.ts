import { marksClaimCheck } from "@outbox/client/internal";
import type { ClaimedRow } from "./outbox-store.js";

const HOUR_MS = 3_600_000;

/**
 * Why a claim-checked row's pointer may not be sent now, or undefined. Its object was put in the
 * row's own transaction, so it is no older than the row (`created_at` is that transaction's start),
 * and the bucket keeps objects RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS plus the queue's and the DLQ's
 * retention: a pointer sent within that many hours of its row's creation cannot outlive its object
 * wherever the message goes. Past it (a relay stopped for weeks, a dead row requeued late, a replay
 * of old rows), sending would hand a consumer a pointer to an object that may be gone.
 */
export function claimCheckAgeProblem(
  row: Pick<ClaimedRow, "headers" | "createdAt">,
  sendWithinHours: number,
  now: number = Date.now(),
): string | undefined {
  if (!marksClaimCheck(row.headers)) return undefined;
  const ageHours = (now - row.createdAt.getTime()) / HOUR_MS;
  if (ageHours <= sendWithinHours) return undefined;
  return `claim-checked event ${Math.floor(ageHours)} h old, over RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (${sendWithinHours} h): its object may expire before the message is read; enqueue it again`;
}
