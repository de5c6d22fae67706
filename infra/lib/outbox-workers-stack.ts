import { Stack } from "aws-cdk-lib";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as sns from "aws-cdk-lib/aws-sns";
import type { Construct } from "constructs";
import type { OutboxAlarms } from "./alarms.js";
import { ApiLoadBalancer } from "./api-load-balancer.js";
import { assertApiReachable } from "./api-reachability.js";
import { apiService } from "./api-service.js";
import type { ApiBudget, ConsumerBudget, RelayBudget } from "./budget.js";
import type { SharedServiceProps } from "./checked-daemon-service.js";
import { ClaimCheckBucket, claimCheckSendWithinHours } from "./claim-check-bucket.js";
import { ConsoleService } from "./console-service.js";
import { consumerService } from "./consumer-service.js";
import { DEFAULT_CPU_ARCHITECTURE } from "./cpu-architecture.js";
import { daemonImages } from "./daemon-images.js";
import type { DaemonService } from "./daemon-service.js";
import { daemonTelemetry } from "./daemon-telemetry.js";
import { allowSecretKeyDecrypt, allowServicesIntoDatabase, databaseUrlSecret } from "./database-access.js";
import { rollBackOnAlarms } from "./deployment-rollback.js";
import { Messaging } from "./messaging.js";
import { MigrationTask, migrationRunner } from "./migration-task.js";
import type { ReconcileSchedule } from "./reconcile-schedule.js";
import { relayService, relayTopicArns } from "./relay-service.js";
import type { ServiceAlarms } from "./service-alarms.js";
import { serviceBudgets } from "./service-budgets.js";
import { stackAlarms } from "./stack-alarms.js";
import { stackNetwork } from "./stack-network.js";
import { stackOutputs } from "./stack-outputs.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";
import type { TelemetrySidecar } from "./telemetry-sidecar.js";

/**
 * Everything the daemons need in one account and region: the topic, the queue and its DLQ, the
 * relay and consumer Fargate services (and the photo service's, with `api`) with their stop budgets,
 * least-privilege roles, a collector sidecar each for metrics and traces, auto-scaling of the
 * consumer, and the alarms.
 *
 * Each concern is a function of its own file that takes the stack as its scope, so every resource
 * keeps the logical id it had when this was one constructor.
 */
export class OutboxWorkersStack extends Stack {
  readonly messaging: Messaging;
  /** The S3 claim check's bucket: the consumer reads it, `claimCheckWriterRoleArns` write it. */
  readonly claimCheck: ClaimCheckBucket;
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
  /** The relay's collector sidecar while it forwards the relay's metrics (its lag alarms read them). */
  readonly relayMetrics: TelemetrySidecar | undefined;
  readonly api: DaemonService | undefined;
  readonly apiBudget: ApiBudget | undefined;
  readonly apiLoadBalancer: ApiLoadBalancer | undefined;
  readonly apiReconcile: ReconcileSchedule | undefined;
  /** The operator console, with `console`; undefined without (the default). */
  readonly console: ConsoleService | undefined;

  constructor(scope: Construct, id: string, props: OutboxWorkersStackProps = {}) {
    super(scope, id, props);
    const startServices = props.startServices ?? true;
    const budgets = serviceBudgets(props);
    this.relayBudget = budgets.relay;
    this.consumerBudget = budgets.consumer;

    const { vpc, taskSubnets, loadBalancerSubnets } = stackNetwork(this, props);
    assertApiReachable(props);
    const cluster = new ecs.Cluster(this, "Cluster", {
      vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    const secret = databaseUrlSecret(this, props);
    const images = daemonImages(this, props.images);
    this.messaging = new Messaging(this, "Messaging", {
      fifo: props.fifo ?? false,
      budget: this.consumerBudget,
      ...(props.maximumMessageSize === undefined ? {} : { maximumMessageSize: props.maximumMessageSize }),
    });
    this.claimCheck = new ClaimCheckBucket(this, "ClaimCheck", {
      budget: this.consumerBudget,
      sendWithinHours: claimCheckSendWithinHours(props),
      ...(props.claimCheckExpirationDays === undefined
        ? {}
        : { expirationDays: props.claimCheckExpirationDays }),
    });
    // The applications that enqueue live outside the stack (the photo service sends small events
    // only): each role named gets PutObject on the bucket's objects, nothing more.
    (props.claimCheckWriterRoleArns ?? []).forEach((arn, index) => {
      this.claimCheck.grantPut(iam.Role.fromRoleArn(this, `ClaimCheckWriter${index}`, arn));
    });

    const shared: Omit<SharedServiceProps, "image"> = {
      cluster,
      databaseUrlSecret: secret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
      ...(props.databaseSecretRotation ? { databaseSecretRotation: true } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      vpcSubnets: taskSubnets,
      cpuArchitecture: props.cpuArchitecture ?? DEFAULT_CPU_ARCHITECTURE,
    };
    const relay = relayService(this, {
      stackProps: props,
      shared: { ...shared, image: images.relay },
      budget: this.relayBudget,
      topic: this.messaging.topic,
      startServices,
    });
    this.relay = relay.daemon;
    this.relayMetrics = relay.metrics;
    // `relay republish`, run as the relay's task, looks for a replayed pointer's object before it sends
    // it (HeadObject; telling a missing object, 404, from a refusal needs ListBucket too).
    this.claimCheck.grantRead(relay.daemon.taskDefinition.taskRole);
    this.consumer = consumerService(this, {
      stackProps: props,
      shared: { ...shared, image: images.consumer },
      budgets,
      messaging: this.messaging,
      claimCheck: this.claimCheck,
      startServices,
    });
    const apiOptions = props.api;
    const api = apiOptions
      ? apiService(this, {
          options: apiOptions,
          shared,
          startServices,
          telemetry: daemonTelemetry(props, "api"),
        })
      : undefined;
    this.api = api?.daemon;
    this.apiBudget = api?.budget;
    this.apiReconcile = api?.reconcile;

    this.console = props.console
      ? new ConsoleService(this, "Console", {
          options: props.console,
          cluster,
          vpc,
          taskSubnets,
          ...(loadBalancerSubnets ? { loadBalancerSubnets } : {}),
          databaseUrlSecret: secret,
          ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
          messaging: this.messaging,
          claimCheck: this.claimCheck,
          // The relay's own routing: a republish sends where the relay sent.
          topicArns: relayTopicArns(props, this.messaging.topic),
          ...(props.logRetention ? { logRetention: props.logRetention } : {}),
        })
      : undefined;

    allowServicesIntoDatabase(this, props, [
      this.relay,
      this.consumer,
      ...(this.api ? [this.api] : []),
      ...(this.console ? [this.console] : []),
    ]);
    this.migration = new MigrationTask(this, "Migration", {
      runner: migrationRunner(
        { service: this.relay, image: images.relay },
        api ? { service: api.daemon, image: api.image } : undefined,
      ),
      databaseUrlSecret: secret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
      vpcSubnets: taskSubnets,
    });
    allowSecretKeyDecrypt(this, props, [this.relay, this.consumer, this.api, this.console, this.migration]);

    const alarms = stackAlarms(this, {
      stackProps: props,
      messaging: this.messaging,
      relay: this.relay,
      relayMetrics: this.relayMetrics,
      consumer: this.consumer,
      api: this.api,
    });
    this.alarmTopic = alarms.alarmTopic;
    this.alarms = alarms.alarms;
    this.relayAlarms = alarms.relayAlarms;
    this.consumerAlarms = alarms.consumerAlarms;
    this.apiAlarms = alarms.apiAlarms;

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

    rollBackOnAlarms(this.relay, [this.relayAlarms.tasksKilled, this.alarms.deadEvents]);
    rollBackOnAlarms(this.consumer, [this.consumerAlarms.tasksKilled, this.alarms.handlerFailures]);
    if (this.api && this.apiAlarms && this.apiLoadBalancer) {
      rollBackOnAlarms(this.api, [this.apiAlarms.tasksKilled, this.apiLoadBalancer.errors5xx]);
    }

    stackOutputs(this, {
      apiLoadBalancer: this.apiLoadBalancer,
      messaging: this.messaging,
      claimCheck: this.claimCheck,
      alarmTopic: this.alarmTopic,
      relayBudget: this.relayBudget,
      consumerBudget: this.consumerBudget,
      migration: this.migration,
    });
  }
}
