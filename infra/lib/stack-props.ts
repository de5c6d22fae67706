import type { Duration, StackProps } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import type * as ecs from "aws-cdk-lib/aws-ecs";
import type * as logs from "aws-cdk-lib/aws-logs";
import type { ConsoleServiceOptions } from "./console-service.js";
import type { CpuArchitectureName } from "./cpu-architecture.js";
import type { DaemonImagesProps } from "./daemon-images.js";
import type { ExistingNetworkProps } from "./worker-vpc.js";

export interface RelayServiceOptions {
  readonly desiredCount?: number;
  readonly drainTimeoutMs?: number;
  /** The outbox `topic` value routed to the stack's topic (RELAY_TOPIC_ARNS `<name>=<arn>`). */
  readonly logicalTopic?: string;
  /**
   * Forward the relay's metrics (its lag among them) to CloudWatch and alarm on the lag. Default
   * true; `telemetry.metrics` false turns it off for every daemon.
   */
  readonly lagMetric?: boolean;
  /** Every collector sidecar's image when `telemetry.collectorImage` is not set (its name before there was one). */
  readonly collectorImage?: string;
  /** Extra daemon variables (names are checked against the relay's settings and platform-environment.ts). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
}

/** Each daemon's task runs an ADOT collector sidecar for its metrics and its traces (telemetry-sidecar.ts). */
export interface TelemetryOptions {
  /** Forward each daemon's /metrics to CloudWatch (EMF, namespace OutboxWorkers). Default true. */
  readonly metrics?: boolean;
  /** Send each daemon's traces to AWS X-Ray through its sidecar. Default true. */
  readonly traces?: boolean;
  /**
   * The share of new traces kept (OTEL_TRACES_SAMPLER_ARG of parentbased_traceidratio; the relay
   * and the consumer follow the api's decision). Default 0.05; 1 keeps every trace.
   */
  readonly traceSampleRatio?: number;
  /** The collector image of every sidecar; pin a tag you have verified. Default: DEFAULT_COLLECTOR_IMAGE. */
  readonly collectorImage?: string;
}

export interface ConsumerServiceOptions {
  readonly minTaskCount?: number;
  readonly maxTaskCount?: number;
  readonly drainTimeoutMs?: number;
  readonly waitTimeSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  /** CONSUMER_HANDLERS_MODULE inside your consumer image (our image with your bundled handlers module). */
  readonly handlersModule?: string;
  /**
   * The consumer image is your application's: its entry point calls `runConsumer({ handlers })`
   * (docs/deployment.md, "Your handlers, two ways"), so the stack sets no CONSUMER_HANDLERS_MODULE.
   * Exactly one of this and `handlersModule`.
   */
  readonly handlersInImage?: boolean;
  /**
   * CONSUMER_NAME, the service's key in the inbox. Unset, the daemon takes its queue's name, which
   * differs between stacks, so two stacks sharing a database never split the events. A stack
   * deployed before names were derived has inbox rows under "consumer": its daemon refuses to start
   * (exit 78, naming both choices) until this says "consumer" (context `consumerName`).
   */
  readonly name?: string;
  /** Alarm when handlers fail more often than this per minute (in 2 of 3 minutes). Default 5. */
  readonly handlerFailureAlarm?: number;
  readonly environment?: Readonly<Record<string, string>>;
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
}

export interface ApiServiceOptions {
  /** API_EQUIPMENT_URL: the equipment service the photo service links gear at. */
  readonly equipmentUrl: string;
  /** The image (the Dockerfile's `api` target). Default: the deploy-time parameter ApiImage. */
  readonly image?: ecs.ContainerImage;
  readonly desiredCount?: number;
  readonly drainTimeoutMs?: number;
  /** The outbox topic of `photo.posted`; routed to the stack's topic by the relay. Default "photos". */
  readonly photoTopic?: string;
  /** An ALB reachable from the internet. Needs `certificateArn`: it then serves HTTPS only. */
  readonly internetFacing?: boolean;
  /**
   * An ACM certificate (complete ARN) for an HTTPS:443 listener; HTTP:80 then only redirects to it.
   * Without one (an internal ALB only) the service is plain HTTP on port 80.
   */
  readonly certificateArn?: string;
  readonly p99Alarm?: Duration;
  /** How often the scheduled task runs `node dist/main.js reconcile`. Default 5 minutes. */
  readonly reconcileEvery?: Duration;
  readonly environment?: Readonly<Record<string, string>>;
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
}

export interface OutboxWorkersStackProps extends StackProps {
  /** FIFO topic and queues. Default false (standard). */
  readonly fifo?: boolean;
  /**
   * The topic's `MaximumMessageSize` (bytes, 1 024–1 048 576), e.g. 1 048 576 for 1 MiB events.
   * Default: not set, SNS's 262 144. See Messaging.
   */
  readonly maximumMessageSize?: number;
  /**
   * IAM roles of the applications that enqueue with the S3 claim check (`S3ClaimCheck` on the
   * stack's ClaimCheckBucketName): each gets s3:PutObject on the bucket's objects. Default none.
   */
  readonly claimCheckWriterRoleArns?: readonly string[];
  /**
   * Days the claim check's objects live. Default: derived, the longest a pointer can live (the
   * relay's RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS, then the queue's and the DLQ's retention twice, for
   * one redrive, plus a day); a shorter value fails the synth.
   */
  readonly claimCheckExpirationDays?: number;
  /**
   * Default: a new VPC (2 AZs, private subnets behind `natGateways` NAT gateways, VPC endpoints for
   * every AWS API the tasks call; see worker-vpc.ts). Yours must give the tasks a way to SNS, SQS,
   * Secrets Manager, CloudWatch Logs and the image registry in its PRIVATE_WITH_EGRESS subnets.
   */
  readonly vpc?: ec2.IVpc;
  /**
   * An existing VPC and its subnets by id (`-c vpcId=… -c subnetIds=…`), imported without a lookup.
   * The same reachability as with `vpc` is yours to provide.
   */
  readonly existingNetwork?: ExistingNetworkProps;
  /** The CPU of every task; must be what the images were built for. Default X86_64 (linux/amd64). */
  readonly cpuArchitecture?: CpuArchitectureName;
  /**
   * NAT gateways of the stack's VPC. Default 1. 0 only when nothing the tasks reach is outside AWS:
   * images in private ECR (`images.kind` "ecr") and the collector image too (pushed there,
   * `telemetry.collectorImage`), or no collector (`telemetry` metrics and traces false). With
   * traces on, the VPC then gets an X-Ray endpoint.
   */
  readonly natGateways?: number;
  /** Default: deploy-time parameters RelayImage and ConsumerImage (see daemon-images.ts). */
  readonly images?: DaemonImagesProps;
  /** Complete ARN of the secret holding the Postgres URL. Default: the DatabaseUrlSecretArn parameter. */
  readonly databaseUrlSecretArn?: string;
  /** JSON key of the URL when the secret is a JSON document. */
  readonly databaseUrlSecretField?: string;
  /**
   * The daemons read the database password from the secret themselves (DATABASE_SECRET_ARN), so a
   * rotated password needs no redeploy; their task roles get read access to it. The whole secret must
   * be the URL or an RDS secret's JSON: not with `databaseUrlSecretField`. Default false.
   */
  readonly databaseSecretRotation?: boolean;
  /**
   * ARN of the customer-managed KMS key that encrypts the secret. The execution roles then get
   * kms:Decrypt on it, through Secrets Manager only. Unset for the default key (aws/secretsmanager).
   */
  readonly databaseUrlSecretKeyArn?: string;
  /**
   * The database's security group: the stack lets the services in on `databasePort` (the migration
   * task runs in the relay's security group).
   */
  readonly databaseSecurityGroupId?: string;
  readonly databasePort?: number;
  readonly relay?: RelayServiceOptions;
  readonly consumer?: ConsumerServiceOptions;
  /** The photo service (apps/api) behind an ALB; not deployed without it. */
  readonly api?: ApiServiceOptions;
  /** The operator console (apps/console) behind an internal ALB of its own; not deployed without it (the default). */
  readonly console?: ConsoleServiceOptions;
  /** Metrics and traces of every daemon; both on by default. */
  readonly telemetry?: TelemetryOptions;
  readonly alarmEmail?: string;
  /**
   * false: every service at 0 tasks, no consumer auto-scaling, no reconcile schedule. For the first
   * deployment: the migration task runs before any daemon needs the schema, then a deployment
   * without it starts the services. Default true.
   */
  readonly startServices?: boolean;
  readonly oldestMessageAgeAlarm?: Duration;
  readonly relayLagAlarm?: Duration;
  readonly logRetention?: logs.RetentionDays;
}
