import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import * as s3 from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { type ConsumerBudget, settingsFor } from "./budget.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";

const DAY_SECONDS = 86_400;

/**
 * The relay's RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS as its task will have it: the operator's value in
 * the relay's environment, else the setting's default. The lifecycle is derived from it.
 */
export function claimCheckSendWithinHours(props: OutboxWorkersStackProps): number {
  const setting = settingsFor.relay.claimCheckSendWithinHours;
  const given = props.relay?.environment?.[setting.env];
  return given === undefined ? (setting.default ?? 0) : Number(given);
}

export interface ClaimCheckBucketProps {
  /** The queue's and the DLQ's retention: the objects' lifetime is derived from them. */
  readonly budget: Pick<ConsumerBudget, "queueRetentionSeconds" | "dlqRetentionSeconds">;
  /** RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS: the oldest an object is when a pointer to it is sent. */
  readonly sendWithinHours: number;
  /** A lifetime of the operator's, in days; refused when shorter than the derived one. */
  readonly expirationDays?: number;
}

/**
 * The S3 claim check's bucket: payloads too large for a message, one object per event put by the
 * application's `enqueue` and read by the consumer before its handler runs. Private (public access
 * blocked, ACLs off, TLS only), encrypted at rest (SSE-S3), retained with the stack like the queues
 * whose messages point into it. Our consumer deletes no object (AWS's extended clients may, each
 * its own): the lifecycle rule expires each once no pointer to it can reach a consumer.
 */
export class ClaimCheckBucket extends Construct {
  readonly bucket: s3.Bucket;
  /** Days an object lives: at least the longest a pointer to it can live (see the constructor). */
  readonly expirationDays: number;

  constructor(
    scope: Construct,
    id: string,
    { budget, sendWithinHours, expirationDays }: ClaimCheckBucketProps,
  ) {
    super(scope, id);
    // The longest a pointer lives after its object's upload: a pointer is sent (by the relay, a
    // requeue, a republish) at most sendWithinHours after it (the relay refuses later); then the
    // message lives the queue's retention and, as a dead letter, the DLQ's (counted in full: our
    // consumer sends poison anew); a redrive sends it again for as long once more. The day on top
    // covers the clocks. A second redrive of the same message is not covered (docs/relay.md).
    const longestPointerSeconds =
      sendWithinHours * 3_600 + 2 * (budget.queueRetentionSeconds + budget.dlqRetentionSeconds);
    const requiredDays = Math.ceil(longestPointerSeconds / DAY_SECONDS) + 1;
    if (expirationDays !== undefined && expirationDays < requiredDays) {
      throw new Error(
        `claimCheckExpirationDays (${expirationDays}) is shorter than the longest a pointer can live: RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (${sendWithinHours} h) + the queue's and the DLQ's retention twice (one redrive) = ${requiredDays} days; a consumer would find objects gone`,
      );
    }
    this.expirationDays = expirationDays ?? requiredDays;
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
