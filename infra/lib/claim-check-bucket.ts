import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import * as s3 from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import type { ConsumerBudget } from "./budget.js";

const DAY_SECONDS = 86_400;

export interface ClaimCheckBucketProps {
  /** The queue's and the DLQ's retention: the objects' lifetime is derived from them. */
  readonly budget: Pick<ConsumerBudget, "queueRetentionSeconds" | "dlqRetentionSeconds">;
}

/**
 * The S3 claim check's bucket: payloads too large for a message, put by the application's
 * `enqueue` under their SHA-256 and read by the consumer before its handler runs. Private (public
 * access blocked, ACLs off, TLS only), encrypted at rest (SSE-S3), retained with the stack like the
 * queues whose messages point into it. Nothing deletes an object on consumption (events with the
 * same payload share one): the lifecycle rule expires each once no message can point at it any more.
 */
export class ClaimCheckBucket extends Construct {
  readonly bucket: s3.Bucket;
  /** Days an object lives: the longest a message pointing at it can live, plus a day. */
  readonly expirationDays: number;

  constructor(scope: Construct, id: string, { budget }: ClaimCheckBucketProps) {
    super(scope, id);
    // A message lives the queue's retention, and as a dead letter up to the DLQ's (a standard DLQ
    // keeps the original enqueue time), from where it may be redriven and must still find its
    // payload. The day on top covers the time between the PutObject and the publish (relay lag).
    const longestMessageSeconds = Math.max(budget.queueRetentionSeconds, budget.dlqRetentionSeconds);
    this.expirationDays = Math.ceil(longestMessageSeconds / DAY_SECONDS) + 1;
    this.bucket = new s3.Bucket(this, "Bucket", {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: "expire-claimed-payloads",
          expiration: Duration.days(this.expirationDays),
          // enqueue sends one PutObject per payload; an upload some other tool left half-done goes too.
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });
  }

  /** What an application that enqueues needs: PutObject on the bucket's objects, nothing else. */
  grantPut(grantee: iam.IGrantable): void {
    iam.Grant.addToPrincipal({
      grantee,
      actions: ["s3:PutObject"],
      resourceArns: [this.bucket.arnForObjects("*")],
    });
  }

  /**
   * What the consumer needs: GetObject on the objects, and ListBucket on the bucket, without which
   * S3 answers a missing object with 403 AccessDenied instead of 404 NoSuchKey, and the consumer
   * could not tell a deleted payload (poison) from a denial (retried).
   */
  grantRead(grantee: iam.IGrantable): void {
    iam.Grant.addToPrincipal({
      grantee,
      actions: ["s3:GetObject"],
      resourceArns: [this.bucket.arnForObjects("*")],
    });
    iam.Grant.addToPrincipal({ grantee, actions: ["s3:ListBucket"], resourceArns: [this.bucket.bucketArn] });
  }
}
