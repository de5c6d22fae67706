import { RELAY_METRICS } from "@outbox/relay";
import { CfnOutput, CfnParameter, Duration, Stack, type StackProps, Token, Validations } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as logs from "aws-cdk-lib/aws-logs";
import * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import type { Construct } from "constructs";
import { OutboxAlarms } from "./alarms.js";
import { ApiLoadBalancer } from "./api-load-balancer.js";
import {
  type ApiBudget,
  apiBudget,
  assertStartsUp,
  type ConsumerBudget,
  consumerBudget,
  type Daemon,
  envNamesOf,
  type RelayBudget,
  relayBudget,
  settingsFor,
} from "./budget.js";
import { scaleConsumerOnQueue } from "./consumer-scaling.js";
import { type CpuArchitectureName, DEFAULT_CPU_ARCHITECTURE } from "./cpu-architecture.js";
import { type DaemonImagesProps, daemonImages } from "./daemon-images.js";
import { DaemonService, type DaemonServiceProps } from "./daemon-service.js";
import { LOGGED, LogEventMetric, loggedAs } from "./log-event-metric.js";
import { Messaging } from "./messaging.js";
import { MigrationTask } from "./migration-task.js";
import { PrometheusEmfSidecar } from "./prometheus-emf-sidecar.js";
import { ReconcileSchedule } from "./reconcile-schedule.js";
import { ServiceAlarms } from "./service-alarms.js";
import { type ExistingNetworkProps, existingNetwork, type WorkerVpc, workerVpc } from "./worker-vpc.js";

export const METRICS_NAMESPACE = "OutboxWorkers";

export interface RelayServiceOptions {
  readonly desiredCount?: number;
  readonly drainTimeoutMs?: number;
  /** The outbox `topic` value routed to the stack's topic (RELAY_TOPIC_ARNS `<name>=<arn>`). */
  readonly logicalTopic?: string;
  /** Forward the lag gauge to CloudWatch with an ADOT sidecar and alarm on it. Default true. */
  readonly lagMetric?: boolean;
  /** The ADOT collector image of that sidecar; pin a tag you have verified. */
  readonly collectorImage?: string;
  /** Extra daemon variables (names are checked against the relay's settings and platform-environment.ts). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
}

export interface ConsumerServiceOptions {
  readonly minTaskCount?: number;
  readonly maxTaskCount?: number;
  readonly drainTimeoutMs?: number;
  readonly waitTimeSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  /** CONSUMER_HANDLERS_MODULE inside your consumer image; unset runs the example handlers. */
  readonly handlersModule?: string;
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
   * images in private ECR (`images.kind` "ecr") and the relay's collector image too (pushed there,
   * `relay.collectorImage`), or no collector (`relay.lagMetric` false).
   */
  readonly natGateways?: number;
  /** Default: deploy-time parameters RelayImage and ConsumerImage (see daemon-images.ts). */
  readonly images?: DaemonImagesProps;
  /** Complete ARN of the secret holding the Postgres URL. Default: the DatabaseUrlSecretArn parameter. */
  readonly databaseUrlSecretArn?: string;
  /** JSON key of the URL when the secret is a JSON document. */
  readonly databaseUrlSecretField?: string;
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

/** The secret's ARN, not the secret: nothing to hide (the URL itself never enters the template). */
function databaseUrlSecretParameter(scope: Construct): CfnParameter {
  const parameter = new CfnParameter(scope, "DatabaseUrlSecretArn", {
    type: "String",
    description: "Complete ARN of the Secrets Manager secret whose value is the Postgres URL",
    allowedPattern: "arn:aws[a-z-]*:secretsmanager:.+",
  });
  // CloudFormation's linter takes any parameter named *Secret* for a password (W2509, reported on the stack).
  Validations.of(Stack.of(scope)).acknowledge({
    id: "CloudFormation-Validate::W2509",
    reason: "an ARN, not a password: the URL itself stays in Secrets Manager",
  });
  return parameter;
}

/**
 * Why the stack's VPC cannot go without a NAT gateway, if it cannot: something a task pulls has no
 * VPC endpoint.
 */
function needsNat(props: OutboxWorkersStackProps): string | undefined {
  if (props.images?.kind !== "ecr") {
    return 'the images are pulled from a registry outside AWS: push them to ECR (images.kind "ecr")';
  }
  if ((props.relay?.lagMetric ?? true) && !props.relay?.collectorImage) {
    return "the collector's default image is on public.ecr.aws, which has no VPC endpoint: push it to your ECR repository and set relay.collectorImage, or set relay.lagMetric to false";
  }
  return undefined;
}

const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/;

/**
 * An internet-facing ALB serves HTTPS or nothing: photos and their metadata never cross the internet
 * in plain text. A malformed ARN fails the synth here, not the deployment half-way.
 */
function assertApiReachable(props: OutboxWorkersStackProps): void {
  const api = props.api;
  if (!api) return;
  if (api.internetFacing && api.certificateArn === undefined) {
    throw new Error(
      "api.internetFacing needs api.certificateArn (-c certificateArn=arn:aws:acm:<region>:<account>:certificate/<id>): an internet-facing ALB serves HTTPS only",
    );
  }
  if (api.certificateArn !== undefined && !Token.isUnresolved(api.certificateArn)) {
    if (!ACM_CERTIFICATE_ARN.test(api.certificateArn)) {
      throw new Error(
        `api.certificateArn ${JSON.stringify(api.certificateArn)} is not an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)`,
      );
    }
  }
  const network = props.existingNetwork;
  if (api.internetFacing && network && network.loadBalancerSubnetIds === undefined) {
    throw new Error(
      "api.internetFacing with existingNetwork needs loadBalancerSubnetIds (-c loadBalancerSubnetIds=…): public subnets for the ALB; the task subnets are private",
    );
  }
  const albSubnets = network ? (network.loadBalancerSubnetIds ?? network.taskSubnetIds) : undefined;
  if (albSubnets && albSubnets.length < 2) {
    throw new Error(
      `the photo service's ALB needs at least two subnets in different AZs; got ${albSubnets.join(", ") || "none"} (set loadBalancerSubnetIds, or give subnetIds two)`,
    );
  }
}

/** Injected by DaemonService from Secrets Manager, never as plain environment. */
const FROM_SECRETS = ["DATABASE_URL"];

/** What one daemon's service takes from the stack beyond the props both services share. */
interface DaemonTask {
  readonly budget: Pick<
    RelayBudget,
    "stopTimeoutMs" | "stopTimeoutSeconds" | "shutdownOverheadMs" | "opsPort"
  >;
  readonly options: Pick<RelayServiceOptions, "environment" | "cpu" | "memoryLimitMiB">;
  /** The daemon's own variables derived by the stack; the budget's common ones are added here. */
  readonly computed: Readonly<Record<string, string>>;
  readonly desiredCount: number;
}

type SharedServiceProps = Omit<
  DaemonServiceProps,
  | "name"
  | "allowedEnvNames"
  | "environment"
  | "stopTimeoutSeconds"
  | "opsPort"
  | "desiredCount"
  | "cpu"
  | "memoryLimitMiB"
>;

/**
 * One daemon's service. Its container environment is the extra variables from its props (which may
 * not set what the stack derives) and the derived ones. Fails the synth, not the deployment: a task
 * the daemon would refuse to start (exit 78) never ships.
 */
function daemonService(
  scope: Construct,
  id: string,
  daemon: Daemon,
  shared: SharedServiceProps,
  { budget, options, computed, desiredCount }: DaemonTask,
): DaemonService {
  const derived: Record<string, string> = {
    STOP_TIMEOUT_MS: String(budget.stopTimeoutMs),
    SHUTDOWN_OVERHEAD_MS: String(budget.shutdownOverheadMs),
    OPS_PORT: String(budget.opsPort),
    AWS_REGION: Stack.of(scope).region,
    ...computed,
  };
  const extra = { ...(options.environment ?? {}) };
  const clash = Object.keys(extra).filter((env) => env in derived || FROM_SECRETS.includes(env));
  if (clash.length > 0) {
    throw new Error(`${daemon}: ${clash.join(", ")} are derived by the stack; set them through its props`);
  }
  const environment = { ...extra, ...derived };
  assertStartsUp(daemon, environment);
  return new DaemonService(scope, id, {
    ...shared,
    name: daemon,
    allowedEnvNames: envNamesOf(daemon),
    environment,
    stopTimeoutSeconds: budget.stopTimeoutSeconds,
    opsPort: budget.opsPort,
    desiredCount,
    ...(options.cpu ? { cpu: options.cpu } : {}),
    ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
  });
}

/**
 * Everything the two daemons need in one account and region: the topic, the queue and its DLQ, the
 * relay and consumer Fargate services with their stop budgets, least-privilege roles, auto-scaling of
 * the consumer, and the alarms.
 */
export class OutboxWorkersStack extends Stack {
  readonly messaging: Messaging;
  readonly relay: DaemonService;
  readonly consumer: DaemonService;
  readonly relayBudget: RelayBudget;
  readonly consumerBudget: ConsumerBudget;
  readonly alarms: OutboxAlarms;
  readonly relayAlarms: ServiceAlarms;
  readonly consumerAlarms: ServiceAlarms;
  readonly apiAlarms: ServiceAlarms | undefined;
  readonly alarmTopic: sns.Topic;
  readonly migration: MigrationTask;
  readonly relayMetrics: PrometheusEmfSidecar | undefined;
  readonly api: DaemonService | undefined;
  readonly apiBudget: ApiBudget | undefined;
  readonly apiLoadBalancer: ApiLoadBalancer | undefined;
  readonly apiReconcile: ReconcileSchedule | undefined;

  constructor(scope: Construct, id: string, props: OutboxWorkersStackProps = {}) {
    super(scope, id, props);
    const relayOptions = props.relay ?? {};
    const consumerOptions = props.consumer ?? {};
    const minTaskCount = consumerOptions.minTaskCount ?? 2;
    const maxTaskCount = consumerOptions.maxTaskCount ?? 10;
    const startServices = props.startServices ?? true;
    if (minTaskCount < 1 || maxTaskCount < minTaskCount) {
      throw new Error("consumer: need 1 ≤ minTaskCount ≤ maxTaskCount");
    }

    this.relayBudget = relayBudget({
      ...(relayOptions.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: relayOptions.drainTimeoutMs }),
    });
    this.consumerBudget = consumerBudget({
      maxTaskCount,
      ...(consumerOptions.drainTimeoutMs === undefined
        ? {}
        : { drainTimeoutMs: consumerOptions.drainTimeoutMs }),
      ...(consumerOptions.waitTimeSeconds === undefined
        ? {}
        : { waitTimeSeconds: consumerOptions.waitTimeSeconds }),
      ...(consumerOptions.visibilityTimeoutSeconds === undefined
        ? {}
        : { visibilityTimeoutSeconds: consumerOptions.visibilityTimeoutSeconds }),
    });

    const { vpc, taskSubnets, loadBalancerSubnets } = this.networkFor(props);
    assertApiReachable(props);
    const cluster = new ecs.Cluster(this, "Cluster", {
      vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });

    const secretArn = props.databaseUrlSecretArn ?? databaseUrlSecretParameter(this).valueAsString;
    const databaseUrlSecret = secretsmanager.Secret.fromSecretCompleteArn(this, "DatabaseUrl", secretArn);
    const images = daemonImages(this, props.images);

    this.messaging = new Messaging(this, "Messaging", {
      fifo: props.fifo ?? false,
      budget: this.consumerBudget,
    });
    const { topic, queue, deadLetterQueue, subscriptionDeadLetterQueue } = this.messaging;
    const shared = {
      cluster,
      databaseUrlSecret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      vpcSubnets: taskSubnets,
      cpuArchitecture: props.cpuArchitecture ?? DEFAULT_CPU_ARCHITECTURE,
    };

    // ── relay ──────────────────────────────────────────────────────────────────────────────────
    const relayBudgetValues = this.relayBudget;
    this.relay = daemonService(
      this,
      "Relay",
      "relay",
      { ...shared, image: images.relay },
      {
        budget: relayBudgetValues,
        options: relayOptions,
        computed: {
          RELAY_DRAIN_TIMEOUT_MS: String(relayBudgetValues.drainTimeoutMs),
          RELAY_TOPIC_ARNS: [
            `${relayOptions.logicalTopic ?? "events"}=${topic.topicArn}`,
            ...(props.api ? [`${props.api.photoTopic ?? "photos"}=${topic.topicArn}`] : []),
          ].join(","),
        },
        // Several relays claim side by side (FOR UPDATE SKIP LOCKED, per-key heads): two for availability.
        desiredCount: startServices ? (relayOptions.desiredCount ?? 2) : 0,
      },
    );
    // PublishBatch is authorized as sns:Publish. This topic only.
    this.relay.taskDefinition.addToTaskRolePolicy(
      new iam.PolicyStatement({ actions: ["sns:Publish"], resources: [topic.topicArn] }),
    );
    this.relayMetrics =
      (relayOptions.lagMetric ?? true)
        ? new PrometheusEmfSidecar(this, "RelayMetrics", {
            taskDefinition: this.relay.taskDefinition,
            opsPort: relayBudgetValues.opsPort,
            metricNames: [
              RELAY_METRICS.lag,
              RELAY_METRICS.unsent,
              RELAY_METRICS.topicsInOutage,
              RELAY_METRICS.blockedKeys,
            ],
            namespace: METRICS_NAMESPACE,
            service: "relay",
            ...(relayOptions.collectorImage ? { collectorImage: relayOptions.collectorImage } : {}),
            ...(props.logRetention ? { logRetention: props.logRetention } : {}),
          })
        : undefined;

    // ── consumer ───────────────────────────────────────────────────────────────────────────────
    const budget = this.consumerBudget;
    this.consumer = daemonService(
      this,
      "Consumer",
      "consumer",
      { ...shared, image: images.consumer },
      {
        budget,
        options: consumerOptions,
        computed: {
          CONSUMER_DRAIN_TIMEOUT_MS: String(budget.drainTimeoutMs),
          CONSUMER_WAIT_TIME_SECONDS: String(budget.waitTimeSeconds),
          CONSUMER_VISIBILITY_TIMEOUT_SECONDS: String(budget.visibilityTimeoutSeconds),
          CONSUMER_QUEUE_RETENTION_HOURS: String(budget.queueRetentionSeconds / 3600),
          CONSUMER_DELIVERY: this.messaging.delivery,
          CONSUMER_QUEUE_URL: queue.queueUrl,
          CONSUMER_DLQ_URL: deadLetterQueue.queueUrl,
          ...(consumerOptions.handlersModule
            ? { CONSUMER_HANDLERS_MODULE: consumerOptions.handlersModule }
            : {}),
        },
        desiredCount: startServices ? minTaskCount : 0,
      },
    );
    // Receive, delete and extend/release (the *Batch calls authorize as the same actions): this queue only.
    this.consumer.taskDefinition.addToTaskRolePolicy(
      new iam.PolicyStatement({
        actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"],
        resources: [queue.queueArn],
      }),
    );
    // Poison messages go to the DLQ at once (CONSUMER_DLQ_URL): send only, to the DLQ only.
    this.consumer.taskDefinition.addToTaskRolePolicy(
      new iam.PolicyStatement({ actions: ["sqs:SendMessage"], resources: [deadLetterQueue.queueArn] }),
    );

    if (startServices) {
      scaleConsumerOnQueue(this.consumer.service, queue, {
        minTaskCount,
        maxTaskCount,
        concurrency: Number(
          consumerOptions.environment?.CONSUMER_CONCURRENCY ?? settingsFor.consumer.concurrency.default,
        ),
        visibilityTimeoutSeconds: budget.visibilityTimeoutSeconds,
      });
    }

    // ── api (the photo service) ─────────────────────────────────────────────────────────────────
    const apiOptions = props.api;
    this.apiBudget = apiOptions
      ? apiBudget(
          apiOptions.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: apiOptions.drainTimeoutMs },
        )
      : undefined;
    const apiImage = apiOptions
      ? (apiOptions.image ??
        ecs.ContainerImage.fromRegistry(
          new CfnParameter(this, "ApiImage", {
            type: "String",
            description: "Photo service image URI (the Dockerfile's `api` target)",
          }).valueAsString,
        ))
      : undefined;
    this.api =
      apiOptions && this.apiBudget && apiImage
        ? daemonService(
            this,
            "Api",
            "api",
            { ...shared, image: apiImage },
            {
              budget: this.apiBudget,
              options: apiOptions,
              computed: {
                API_DRAIN_TIMEOUT_MS: String(this.apiBudget.drainTimeoutMs),
                API_PORT: String(this.apiBudget.port),
                API_LB_IDLE_TIMEOUT_MS: String(this.apiBudget.loadBalancerIdleTimeoutSeconds * 1000),
                API_KEEP_ALIVE_TIMEOUT_MS: String(this.apiBudget.keepAliveTimeoutMs),
                API_EQUIPMENT_URL: apiOptions.equipmentUrl,
                API_PHOTO_TOPIC: apiOptions.photoTopic ?? "photos",
                // The scheduled task below owns reconciliation. With the loop on as well, every replica
                // would poll too: the load on Postgres and the equipment service would grow with the
                // task count, and the cadence would be set in two places.
                API_RECONCILE_INTERVAL_MS: "0",
              },
              desiredCount: startServices ? (apiOptions.desiredCount ?? 2) : 0,
            },
          )
        : undefined;
    // The service talks to Postgres and the equipment service only: its task role gets no policy.
    this.apiReconcile =
      startServices && this.api && apiImage
        ? new ReconcileSchedule(this, "ApiReconcile", {
            api: this.api,
            image: apiImage,
            databaseUrlSecret,
            ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
            vpcSubnets: shared.vpcSubnets,
            ...(apiOptions?.reconcileEvery ? { every: apiOptions.reconcileEvery } : {}),
          })
        : undefined;

    // ── database access ────────────────────────────────────────────────────────────────────────
    if (props.databaseSecurityGroupId) {
      if (!/^sg-[0-9a-f]{8,17}$/.test(props.databaseSecurityGroupId)) {
        throw new Error(
          `databaseSecurityGroupId ${JSON.stringify(props.databaseSecurityGroupId)} is not a security group id (sg-…)`,
        );
      }
      const database = ec2.SecurityGroup.fromSecurityGroupId(
        this,
        "DatabaseSecurityGroup",
        props.databaseSecurityGroupId,
      );
      const port = ec2.Port.tcp(props.databasePort ?? 5432);
      for (const daemon of [this.relay, this.consumer, ...(this.api ? [this.api] : [])]) {
        database.connections.allowFrom(daemon.service, port, `${daemon.container.containerName} → Postgres`);
      }
    }

    // ── schema migration ───────────────────────────────────────────────────────────────────────
    this.migration = new MigrationTask(this, "Migration", {
      relay: this.relay,
      image: images.relay,
      databaseUrlSecret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
      vpcSubnets: taskSubnets,
    });

    // ── the secret's key ───────────────────────────────────────────────────────────────────────
    // Every role that reads the secret may decrypt it, through Secrets Manager only. In the roles'
    // own policies: CDK would grant an imported key's use through the key's policy, which it cannot
    // change, and so grant nothing. (The reconcile task shares the photo service's execution role.)
    if (props.databaseUrlSecretKeyArn) {
      for (const readsTheSecret of [this.relay, this.consumer, this.api, this.migration]) {
        readsTheSecret?.taskDefinition.addToExecutionRolePolicy(
          new iam.PolicyStatement({
            actions: ["kms:Decrypt"],
            resources: [props.databaseUrlSecretKeyArn],
            conditions: { StringEquals: { "kms:ViaService": `secretsmanager.${this.region}.amazonaws.com` } },
          }),
        );
      }
    }

    // ── alarms ─────────────────────────────────────────────────────────────────────────────────
    this.alarmTopic = new sns.Topic(this, "AlarmTopic");
    if (props.alarmEmail) {
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    }
    // Events that are log lines only: each line counts once (see log-event-metric.ts).
    const relayDeadEvents = new LogEventMetric(this, "RelayDeadEventLines", {
      logGroup: this.relay.logGroup,
      pattern: loggedAs(LOGGED.eventDead),
      namespace: METRICS_NAMESPACE,
      metricName: "dead_events",
      service: "relay",
    });
    const consumerHandlerFailures = new LogEventMetric(this, "ConsumerHandlerFailureLines", {
      logGroup: this.consumer.logGroup,
      pattern: loggedAs(LOGGED.messageFailed),
      namespace: METRICS_NAMESPACE,
      metricName: "handler_failures",
      service: "consumer",
    });
    this.alarms = new OutboxAlarms(this, "Alarms", {
      queue,
      deadLetterQueue,
      subscriptionDeadLetterQueue,
      ...(this.relayMetrics
        ? {
            relayLag: this.relayMetrics.metric(RELAY_METRICS.lag),
            relayTopicsInOutage: this.relayMetrics.metric(RELAY_METRICS.topicsInOutage),
            relayBlockedKeys: this.relayMetrics.metric(RELAY_METRICS.blockedKeys),
          }
        : {}),
      relayDeadEvents: relayDeadEvents.metric(),
      consumerHandlerFailures: consumerHandlerFailures.metric(),
      oldestMessageAgeThreshold: props.oldestMessageAgeAlarm ?? Duration.minutes(5),
      relayLagThreshold: props.relayLagAlarm ?? Duration.minutes(1),
      handlerFailuresPerMinute: consumerOptions.handlerFailureAlarm ?? 5,
      alarmTopic: this.alarmTopic,
    });
    const serviceAlarms = (id: string, daemon: DaemonService) =>
      new ServiceAlarms(this, id, { daemon, namespace: METRICS_NAMESPACE, alarmTopic: this.alarmTopic });
    this.relayAlarms = serviceAlarms("RelayAlarms", this.relay);
    this.consumerAlarms = serviceAlarms("ConsumerAlarms", this.consumer);
    this.apiAlarms = this.api ? serviceAlarms("ApiAlarms", this.api) : undefined;

    this.apiLoadBalancer =
      this.api && this.apiBudget
        ? new ApiLoadBalancer(this, "ApiLoadBalancer", {
            vpc,
            ...(loadBalancerSubnets ? { vpcSubnets: loadBalancerSubnets } : {}),
            ...(apiOptions?.certificateArn ? { certificateArn: apiOptions.certificateArn } : {}),
            api: this.api,
            budget: this.apiBudget,
            ...(apiOptions?.internetFacing === undefined
              ? {}
              : { internetFacing: apiOptions.internetFacing }),
            ...(apiOptions?.p99Alarm ? { p99Threshold: apiOptions.p99Alarm } : {}),
            alarmTopic: this.alarmTopic,
          })
        : undefined;

    // A deployment whose new tasks get killed or break what the service promises rolls back on its
    // own, like one whose tasks fail to start (the circuit breaker). Not the unclean drain: that is
    // the old tasks' stop, which a rollback would only repeat.
    const rollBackOn = (daemon: DaemonService, alarms: readonly cloudwatch.IAlarm[]) =>
      daemon.service.enableDeploymentAlarms(
        alarms.map((alarm) => alarm.alarmName),
        { behavior: ecs.AlarmBehavior.ROLLBACK_ON_ALARM },
      );
    rollBackOn(this.relay, [this.relayAlarms.tasksKilled, this.alarms.deadEvents]);
    rollBackOn(this.consumer, [this.consumerAlarms.tasksKilled, this.alarms.handlerFailures]);
    if (this.api && this.apiAlarms && this.apiLoadBalancer) {
      rollBackOn(this.api, [this.apiAlarms.tasksKilled, this.apiLoadBalancer.errors5xx]);
    }

    if (this.apiLoadBalancer) {
      new CfnOutput(this, "ApiUrl", {
        value: `${this.apiLoadBalancer.scheme}://${this.apiLoadBalancer.loadBalancer.loadBalancerDnsName}`,
      });
    }

    new CfnOutput(this, "TopicArn", { value: topic.topicArn });
    new CfnOutput(this, "QueueUrl", { value: queue.queueUrl });
    new CfnOutput(this, "DeadLetterQueueUrl", { value: deadLetterQueue.queueUrl });
    new CfnOutput(this, "SubscriptionDeadLetterQueueUrl", { value: subscriptionDeadLetterQueue.queueUrl });
    new CfnOutput(this, "AlarmTopicArn", { value: this.alarmTopic.topicArn });
    new CfnOutput(this, "RelayStopTimeoutSeconds", { value: String(relayBudgetValues.stopTimeoutSeconds) });
    new CfnOutput(this, "ConsumerStopTimeoutSeconds", { value: String(budget.stopTimeoutSeconds) });
    new CfnOutput(this, "MigrationTaskDefinitionArn", {
      value: this.migration.taskDefinition.taskDefinitionArn,
    });
    new CfnOutput(this, "MigrateCommand", {
      description: "Run once before the services start and before each new version; prints the task's ARN",
      value: this.migration.runTaskCommand,
    });
  }

  /** The stack's own VPC, or the one given (`vpc`, or `existingNetwork` by ids). */
  private networkFor(props: OutboxWorkersStackProps): WorkerVpc {
    const given = [props.vpc && "vpc", props.existingNetwork && "existingNetwork"].filter(Boolean);
    if (given.length > 1) throw new Error("vpc and existingNetwork both name the network: give one");
    if (given.length === 1 && props.natGateways !== undefined) {
      throw new Error(`natGateways shapes the stack's own VPC; with \`${given[0]}\` the network is yours`);
    }
    if (props.existingNetwork) return existingNetwork(this, props.existingNetwork);
    if (props.vpc) return { vpc: props.vpc, taskSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } };
    const natGateways = props.natGateways ?? 1;
    const withoutNat = natGateways === 0 ? needsNat(props) : undefined;
    if (withoutNat) throw new Error(`natGateways 0: ${withoutNat}`);
    return workerVpc(this, { natGateways, ecrImages: props.images?.kind === "ecr" });
  }
}
