import { consumerSettings } from "@outbox/consumer";
import { RELAY_METRICS, relaySettings } from "@outbox/relay";
import type { CfnElement } from "aws-cdk-lib";
import { Match } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import { consumerBudget, relayBudget } from "../lib/budget.js";
import { LOG_BUFFER_SIZE } from "../lib/daemon-service.js";
import { METRICS_NAMESPACE } from "../lib/metrics-namespace.js";
import { DEFAULT_TRACE_SAMPLE_RATIO, tracesEnvironment } from "../lib/telemetry-sidecar.js";
import { container, containerBeside, environmentOf, synth } from "./support/synth.js";

const { stack, template } = synth();
const logicalId = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const relay = relayBudget();
const consumer = consumerBudget({ maxTaskCount: 10 });
const queueId = logicalId(stack.messaging.queue);
const dlqId = logicalId(stack.messaging.deadLetterQueue);
const topicId = logicalId(stack.messaging.topic);

describe("messaging", () => {
  it("creates a standard topic by default and FIFO resources on request", () => {
    template.resourceCountIs("AWS::SNS::Topic", 2); // events + alarms
    template.hasResourceProperties("AWS::SNS::Topic", Match.objectLike({ FifoTopic: Match.absent() }));
    const fifo = synth({ fifo: true }).template;
    fifo.hasResourceProperties("AWS::SNS::Topic", { FifoTopic: true });
    // The queue, its DLQ and the subscription's DLQ (a FIFO topic needs a FIFO DLQ).
    expect(
      Object.keys(fifo.findResources("AWS::SQS::Queue", { Properties: { FifoQueue: true } })),
    ).toHaveLength(3);
  });

  it("gives the queue the consumer's lease, long poll and retention, and a redrive sized for stops", () => {
    template.hasResourceProperties("AWS::SQS::Queue", {
      VisibilityTimeout: consumer.visibilityTimeoutSeconds,
      ReceiveMessageWaitTimeSeconds: consumer.waitTimeSeconds,
      MessageRetentionPeriod: consumer.queueRetentionSeconds,
      SqsManagedSseEnabled: true,
      RedrivePolicy: {
        deadLetterTargetArn: { "Fn::GetAtt": [dlqId, "Arn"] },
        maxReceiveCount: consumer.maxReceiveCount,
      },
    });
    expect(consumer.visibilityTimeoutSeconds).toBe(consumerSettings.visibilityTimeoutSeconds.default);
    expect(consumer.maxReceiveCount).toBe(35);
  });

  it("keeps dead letters longer than the queue keeps messages", () => {
    const dlq = template.findResources("AWS::SQS::Queue")[dlqId];
    expect(dlq?.Properties.MessageRetentionPeriod).toBe(1_209_600);
    expect(dlq?.Properties.MessageRetentionPeriod).toBeGreaterThan(consumer.queueRetentionSeconds);
  });

  it("subscribes the queue to the topic with raw delivery, allowed by a queue policy for that topic only", () => {
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "sqs",
      TopicArn: { Ref: topicId },
      Endpoint: { "Fn::GetAtt": [queueId, "Arn"] },
      RawMessageDelivery: true,
    });
    const queuePolicies = Object.values(
      template.findResources("AWS::SQS::QueuePolicy", { Properties: { Queues: [{ Ref: queueId }] } }),
    );
    expect(queuePolicies).toHaveLength(1);
    const statements: { Effect: string }[] = queuePolicies[0]?.Properties.PolicyDocument.Statement ?? [];
    const allows = statements.filter((statement) => statement.Effect === "Allow");
    expect(allows).toEqual([
      {
        Action: "sqs:SendMessage",
        Effect: "Allow",
        Principal: { Service: "sns.amazonaws.com" },
        Resource: { "Fn::GetAtt": [queueId, "Arn"] },
        Condition: { ArnEquals: { "aws:SourceArn": { Ref: topicId } } },
      },
    ]);
  });
});

describe("the containers", () => {
  const relayContainer = container(template, "relay");
  const consumerContainer = container(template, "consumer");

  it("stop after the computed stopTimeout, which the daemons are told as STOP_TIMEOUT_MS", () => {
    expect(relayContainer.StopTimeout).toBe(relay.stopTimeoutSeconds);
    expect(consumerContainer.StopTimeout).toBe(consumer.stopTimeoutSeconds);
    for (const [definition, budget] of [
      [relayContainer, relay],
      [consumerContainer, consumer],
    ] as const) {
      const stopTimeout = definition.StopTimeout ?? Number.NaN;
      expect(stopTimeout).toBeLessThanOrEqual(120);
      expect(stopTimeout * 1000).toBeGreaterThan(
        budget.drainTimeoutMs + budget.shutdownOverheadMs + budget.marginMs - 1,
      );
      expect(environmentOf(definition).STOP_TIMEOUT_MS).toBe(String(stopTimeout * 1000));
      expect(environmentOf(definition).SHUTDOWN_OVERHEAD_MS).toBe(String(budget.shutdownOverheadMs));
    }
    const env = environmentOf(consumerContainer);
    expect(
      Number(env.CONSUMER_WAIT_TIME_SECONDS) * 1000 + Number(env.CONSUMER_DRAIN_TIMEOUT_MS),
    ).toBeLessThan((consumerContainer.StopTimeout ?? 0) * 1000);
    expect(Number(environmentOf(relayContainer).RELAY_DRAIN_TIMEOUT_MS)).toBe(relay.drainTimeoutMs);
  });

  it("use only the environment variables the daemons read", () => {
    // Besides their settings: the OTEL_* variables that send their spans to the collector sidecar.
    const traces = Object.keys(tracesEnvironment(DEFAULT_TRACE_SAMPLE_RATIO));
    const relayNames = new Set([...Object.values(relaySettings).map((setting) => setting.env), ...traces]);
    const consumerNames = new Set([
      ...Object.values(consumerSettings).map((setting) => setting.env),
      ...traces,
    ]);
    for (const name of Object.keys(environmentOf(relayContainer))) expect(relayNames).toContain(name);
    for (const name of Object.keys(environmentOf(consumerContainer))) expect(consumerNames).toContain(name);
    expect(() => synth({ relay: { environment: { RELAY_BATCHSIZE: "10" } } })).toThrow(
      /no variable named RELAY_BATCHSIZE/,
    );
    expect(() => synth({ consumer: { environment: { STOP_TIMEOUT_MS: "90000" } } })).toThrow(
      /derived by the stack/,
    );
  });

  it("set DB_SSL_MODE=verify-full on every daemon, so TLS to the database never rests on a default; a service's own value wins", () => {
    const { template: withApi } = synth({ api: { equipmentUrl: "https://equipment.example.com" } });
    for (const name of ["relay", "consumer", "api"]) {
      expect(environmentOf(container(withApi, name)).DB_SSL_MODE, name).toBe("verify-full");
    }
    const { template: required } = synth({ relay: { environment: { DB_SSL_MODE: "require" } } });
    expect(environmentOf(container(required, "relay")).DB_SSL_MODE).toBe("require");
  });

  it("wire the topic and the queues into the daemons' variables", () => {
    expect(environmentOf(relayContainer).RELAY_TOPIC_ARNS).toEqual({
      "Fn::Join": ["", ["events=", { Ref: topicId }]],
    });
    expect(environmentOf(consumerContainer).CONSUMER_QUEUE_URL).toEqual({ Ref: queueId });
    expect(environmentOf(consumerContainer).CONSUMER_DLQ_URL).toEqual({ Ref: dlqId });
    // Unset: the daemon takes its queue's name, one per stack (docs/consumer.md, one name per service).
    expect(environmentOf(consumerContainer).CONSUMER_NAME).toBeUndefined();
    expect(environmentOf(consumerContainer).CONSUMER_VISIBILITY_TIMEOUT_SECONDS).toBe(
      String(consumer.visibilityTimeoutSeconds),
    );
    expect(environmentOf(consumerContainer).CONSUMER_QUEUE_RETENTION_HOURS).toBe(
      String(consumer.queueRetentionSeconds / 3600),
    );
  });

  it("tell the consumer how the subscription delivers: raw, so it never unwraps a body", () => {
    template.hasResourceProperties("AWS::SNS::Subscription", { RawMessageDelivery: true });
    expect(environmentOf(consumerContainer).CONSUMER_DELIVERY).toBe("raw");
    expect(environmentOf(consumerContainer).CONSUMER_TOPIC_ARNS).toBeUndefined();
  });

  it("run under an init process, read-only, with a fetch-based /livez health check", () => {
    for (const definition of [relayContainer, consumerContainer]) {
      expect(definition.LinuxParameters).toMatchObject({ InitProcessEnabled: true });
      expect(definition.ReadonlyRootFilesystem).toBe(true);
      expect(definition.Essential).toBe(true);
      const check = definition.HealthCheck as { Command: string[]; Interval: number; Retries: number };
      expect(check.Command.slice(0, 3)).toEqual(["CMD", "node", "-e"]);
      expect(check.Command[3]).toContain(`fetch("http://127.0.0.1:${relaySettings.opsPort.default}/livez"`);
      expect(check.Command.join(" ")).not.toMatch(/curl|wget/);
    }
  });

  it("get DATABASE_URL from Secrets Manager, never as plain environment", () => {
    for (const definition of [relayContainer, consumerContainer]) {
      expect(definition.Secrets).toEqual([
        { Name: "DATABASE_URL", ValueFrom: { Ref: "DatabaseUrlSecretArn" } },
      ]);
      expect(environmentOf(definition).DATABASE_URL).toBeUndefined();
    }
    const withField = synth({
      databaseUrlSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf",
      databaseUrlSecretField: "url",
    }).template;
    expect(container(withField, "relay").Secrets).toEqual([
      {
        Name: "DATABASE_URL",
        ValueFrom: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf:url::",
      },
    ]);
  });

  it("log to CloudWatch without blocking, through a buffer, into groups with a retention", () => {
    // Blocking, a CloudWatch Logs throttle would stall the daemon at its next (synchronous) log line.
    expect(LOG_BUFFER_SIZE.toMebibytes()).toBe(25);
    for (const definition of [relayContainer, consumerContainer]) {
      expect(definition.LogConfiguration).toMatchObject({
        LogDriver: "awslogs",
        Options: { mode: "non-blocking", "max-buffer-size": `${LOG_BUFFER_SIZE.toBytes()}b` },
      });
    }
    const groups = Object.values(template.findResources("AWS::Logs::LogGroup"));
    expect(groups).toHaveLength(4); // relay, consumer, and each one's collector sidecar (EMF)
    for (const group of groups) expect(group.Properties.RetentionInDays).toBeGreaterThan(0);
    template.hasResourceProperties("AWS::Logs::LogGroup", { RetentionInDays: 30 });
  });

  it("take their images from deploy-time parameters, with no asset to build", () => {
    expect(relayContainer.Image).toEqual({ Ref: "RelayImage" });
    expect(consumerContainer.Image).toEqual({ Ref: "ConsumerImage" });
    template.hasParameter("RelayImage", { Type: "String" });
    template.hasParameter("ConsumerImage", { Type: "String" });
    template.hasParameter("DatabaseUrlSecretArn", { Type: "String" });
  });
});

describe("the services", () => {
  it("deploy with the circuit breaker and its rollback, new tasks before old ones stop", () => {
    template.resourceCountIs("AWS::ECS::Service", 2);
    for (const service of Object.values(template.findResources("AWS::ECS::Service"))) {
      expect(service.Properties).toMatchObject({
        LaunchType: "FARGATE",
        DeploymentConfiguration: {
          DeploymentCircuitBreaker: { Enable: true, Rollback: true },
          MinimumHealthyPercent: 100,
          MaximumPercent: 200,
        },
        NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: "DISABLED" } },
      });
    }
  });

  it("scale the consumer between its bounds on queue depth and on the oldest message's age", () => {
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", {
      MinCapacity: 2,
      MaxCapacity: 10,
      ScalableDimension: "ecs:service:DesiredCount",
    });
    const alarms = Object.values(template.findResources("AWS::CloudWatch::Alarm")).map(
      (alarm) => alarm.Properties as { MetricName?: string; Namespace?: string; AlarmActions?: unknown[] },
    );
    const scalingMetrics = alarms
      .filter((alarm) => JSON.stringify(alarm.AlarmActions ?? []).includes("TaskCountTarget"))
      .map((alarm) => alarm.MetricName);
    expect(scalingMetrics).toEqual(
      expect.arrayContaining(["ApproximateNumberOfMessagesVisible", "ApproximateAgeOfOldestMessage"]),
    );
    template.resourceCountIs("AWS::ApplicationAutoScaling::ScalingPolicy", 3);
  });

  it("scale the consumer in only when no message is waiting and none is held by a task", () => {
    const scalingAlarms = Object.values(template.findResources("AWS::CloudWatch::Alarm"))
      .map((alarm) => alarm.Properties)
      .filter((alarm) => JSON.stringify(alarm.AlarmActions ?? []).includes("TaskCountTarget"));
    const policies = template.findResources("AWS::ApplicationAutoScaling::ScalingPolicy");
    const removesTasks = (alarm: { AlarmActions: { Ref: string }[] }) =>
      alarm.AlarmActions.some((action) =>
        (policies[action.Ref]?.Properties.StepScalingPolicyConfiguration.StepAdjustments ?? []).some(
          (step: { ScalingAdjustment: number }) => step.ScalingAdjustment < 0,
        ),
      );
    const scaleIn = scalingAlarms.filter(removesTasks);
    expect(scaleIn).toHaveLength(1);
    expect(scaleIn[0]).toMatchObject({ ComparisonOperator: "LessThanOrEqualToThreshold", Threshold: 0 });
    const metrics = scaleIn[0]?.Metrics as {
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions: unknown } };
    }[];
    expect(metrics.map((metric) => metric.Expression).filter(Boolean)).toEqual(["visible + inFlight"]);
    const onTheQueue = [{ Name: "QueueName", Value: { "Fn::GetAtt": [queueId, "QueueName"] } }];
    expect(metrics.flatMap((metric) => (metric.MetricStat ? [metric.MetricStat.Metric] : []))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ MetricName: "ApproximateNumberOfMessagesVisible", Dimensions: onTheQueue }),
        expect.objectContaining({
          MetricName: "ApproximateNumberOfMessagesNotVisible",
          Dimensions: onTheQueue,
        }),
      ]),
    );
    // Scale-out still reads the waiting messages alone: work in flight is work being done.
    const scaleOutOnBacklog = scalingAlarms.filter(
      (alarm) => alarm.MetricName === "ApproximateNumberOfMessagesVisible",
    );
    expect(scaleOutOnBacklog).toHaveLength(1);
    expect(scaleOutOnBacklog[0]?.ComparisonOperator).toBe("GreaterThanOrEqualToThreshold");
  });

  it("lets both services into the database's security group when one is given", () => {
    const { template: withDb } = synth({ databaseSecurityGroupId: "sg-0123456789abcdef0" });
    withDb.resourceCountIs("AWS::EC2::SecurityGroupIngress", 2);
    withDb.hasResourceProperties("AWS::EC2::SecurityGroupIngress", {
      GroupId: "sg-0123456789abcdef0",
      IpProtocol: "tcp",
      FromPort: 5432,
      ToPort: 5432,
    });
  });
});

describe("alarms", () => {
  it("fires when the DLQ is not empty", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      ComparisonOperator: "GreaterThanThreshold",
      Threshold: 0,
      TreatMissingData: "notBreaching",
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "visible + notVisible" }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              MetricName: "ApproximateNumberOfMessagesVisible",
              Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [dlqId, "QueueName"] } }],
            }),
          }),
        }),
      ]),
    });
  });

  it("fires when the queue's oldest message is older than the threshold", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateAgeOfOldestMessage",
      Namespace: "AWS/SQS",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [queueId, "QueueName"] } }],
      Threshold: 300,
      AlarmActions: [{ Ref: Match.stringLikeRegexp("^AlarmTopic") }],
    });
  });

  it("fires on the relay's lag, forwarded from /metrics by a collector sidecar as EMF", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: RELAY_METRICS.lag,
      Namespace: METRICS_NAMESPACE,
      Dimensions: [{ Name: "service", Value: "relay" }],
      Threshold: 60,
      TreatMissingData: "breaching",
    });
    const sidecar = containerBeside(template, "relay", "collector");
    expect(sidecar.Essential).toBe(false);
    expect(sidecar.Image).toMatch(/^public\.ecr\.aws\/aws-observability\/aws-otel-collector:/);
    const config = JSON.stringify(environmentOf(sidecar).AOT_CONFIG_CONTENT);
    expect(config).toContain(`127.0.0.1:${relay.opsPort}`);
    expect(config).toContain(RELAY_METRICS.lag);
    expect(config).toContain("awsemf");
    expect(
      synth({ relay: { lagMetric: false } }).template.findResources("AWS::CloudWatch::Alarm", {
        Properties: { MetricName: RELAY_METRICS.lag },
      }),
    ).toEqual({});
  });
});
