import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { s3Client } from "../aws-clients.js";
import type { AwsEndpoints } from "../local-stack.js";

/** The bucket both backends create for the S3 claim check. */
export const CLAIM_CHECK_BUCKET = "outbox-claim-check";

/** Creates the claim check's bucket on the stack's S3, through the real SDK, as on any backend. */
export async function createClaimCheckBucket(aws: AwsEndpoints, bucket = CLAIM_CHECK_BUCKET): Promise<void> {
  const s3 = s3Client(aws, { maxAttempts: 3 });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(10_000) });
  } finally {
    s3.destroy();
  }
}
