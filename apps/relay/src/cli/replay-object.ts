import { Deadline } from "@outbox/client";
import { claimCheckPointer, pointerUri } from "@outbox/client/internal";
import { objectExists, type S3Client } from "@outbox/shared";
import type { ClaimedRow } from "../outbox-store.js";

/**
 * Why a claim-checked row's pointer may not be sent again because its object is gone, or undefined
 * (there, or not a claim-checked row). The age rule (claim-check-age.ts) knows when the bucket's
 * lifecycle may have removed an object, not whether someone deleted it: a consumer built on AWS's
 * SQS extended client deletes it after processing by default. A replay of that pointer would reach
 * every consumer as `claimed_payload_missing`, so S3 is asked (HeadObject on the pointer's own
 * bucket and key, within `timeoutMs`). Throws when S3 cannot say (unreachable, denied, too slow):
 * an outage is not a missing object.
 */
export async function goneObjectProblem(
  s3: S3Client,
  row: Pick<ClaimedRow, "headers" | "payload">,
  timeoutMs: number,
): Promise<string | undefined> {
  const pointer = claimCheckPointer(row.headers, row.payload);
  if (pointer === undefined) return undefined;
  const deadline = Deadline.after(timeoutMs);
  try {
    if (await objectExists(s3, pointer, deadline.signal)) return undefined;
  } finally {
    deadline.dispose();
  }
  return `claim-checked event whose object ${pointerUri(pointer)} is gone (deleted, or expired): its pointer would reach consumers without a payload; enqueue it again`;
}
