import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { RELAY_METRICS } from "@outbox/relay";
import type { CfnElement } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import { LOGGED } from "../lib/log-event-metric.js";
import { METRICS_NAMESPACE } from "../lib/metrics-namespace.js";
import { SIGKILL_EXIT_CODE } from "../lib/service-alarms.js";
import { synth } from "./support/synth.js";

const { stack, template } = synth({ api: { equipmentUrl: "http://equipment.internal:8080" } });
const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const alarmTopic = { Ref: id(stack.alarmTopic) };
const daemons = { relay: stack.relay, consumer: stack.consumer, api: stack.api } as const;
const serviceAlarms = { relay: stack.relayAlarms, consumer: stack.consumerAlarms, api: stack.apiAlarms };

interface AlarmProperties {
  MetricName?: string;
  Namespace?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Metrics?: {
    Id: string;
    Expression?: string;
    MetricStat?: { Metric: Record<string, unknown>; Stat: string };
  }[];
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
  TreatMissingData?: string;
  AlarmActions?: unknown[];
  OKActions?: unknown[];
}

function alarm(construct: IConstruct): AlarmProperties {
  const found = template.findResources("AWS::CloudWatch::Alarm")[id(construct)];
  if (!found) throw new Error(`no alarm ${construct.node.path}`);
  return found.Properties;
}

function metricFilters(logGroup: IConstruct): Record<string, unknown>[] {
  return Object.values(template.findResources("AWS::Logs::MetricFilter"))
    .map((filter) => filter.Properties)
    .filter((filter) => JSON.stringify(filter.LogGroupName) === JSON.stringify({ Ref: id(logGroup) }));
}

/** A metric counted from log lines: one per line, dimension `service` from the line's own field. */
function countsLines(metricName: string, pattern: string) {
  return expect.objectContaining({
    FilterPattern: pattern,
    MetricTransformations: [
      {
        MetricNamespace: METRICS_NAMESPACE,
        MetricName: metricName,
        MetricValue: "1",
        Dimensions: [{ Key: "service", Value: "$.service" }],
      },
    ],
  });
}

function notifiesTheTopic(properties: AlarmProperties): void {
  expect(properties.AlarmActions).toEqual([alarmTopic]);
  expect(properties.OKActions).toEqual([alarmTopic]);
}

describe("what the relay promises", () => {
  it("alarms on the first outbox row marked dead, counted from its `event dead` lines", () => {
    expect(metricFilters(stack.relay.logGroup)).toContainEqual(
      countsLines("dead_events", `{ $.msg = "${LOGGED.eventDead}" }`),
    );
    const deadEvents = alarm(stack.alarms.deadEvents);
    expect(deadEvents).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: "dead_events",
      Dimensions: [{ Name: "service", Value: "relay" }],
      Statistic: "Sum",
      Threshold: 0,
      ComparisonOperator: "GreaterThanThreshold",
      EvaluationPeriods: 1,
      TreatMissingData: "notBreaching",
    });
    notifiesTheTopic(deadEvents);
  });

  it("alarms when SNS fails its whole requests for 3 minutes, and while a dead row blocks a key", () => {
    const forwarded = (metricName: string) => ({
      Namespace: METRICS_NAMESPACE,
      MetricName: metricName,
      Dimensions: [{ Name: "service", Value: "relay" }],
      Statistic: "Maximum",
      Threshold: 0,
      ComparisonOperator: "GreaterThanThreshold",
      TreatMissingData: "notBreaching",
    });
    const outage = alarm(stack.alarms.snsOutage as IConstruct);
    expect(outage).toMatchObject({
      ...forwarded(RELAY_METRICS.topicsInOutage),
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    notifiesTheTopic(outage);
    const blocked = alarm(stack.alarms.blockedKeys as IConstruct);
    expect(blocked).toMatchObject({ ...forwarded(RELAY_METRICS.blockedKeys), EvaluationPeriods: 1 });
    notifiesTheTopic(blocked);
    // Both gauges reach CloudWatch through the collector sidecar.
    const sidecar = JSON.stringify(template.findResources("AWS::ECS::TaskDefinition"));
    for (const name of [RELAY_METRICS.topicsInOutage, RELAY_METRICS.blockedKeys])
      expect(sidecar).toContain(name);
  });
});

describe("what the consumer promises", () => {
  it("alarms when handlers keep failing, counted from its `message failed` lines", () => {
    expect(metricFilters(stack.consumer.logGroup)).toContainEqual(
      countsLines("handler_failures", `{ $.msg = "${LOGGED.messageFailed}" }`),
    );
    const failures = alarm(stack.alarms.handlerFailures);
    expect(failures).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: "handler_failures",
      Dimensions: [{ Name: "service", Value: "consumer" }],
      Threshold: 5,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
    notifiesTheTopic(failures);
    const strict = synth({ consumer: { handlerFailureAlarm: 0 } });
    expect(
      strict.template.findResources("AWS::CloudWatch::Alarm")[
        strict.stack.getLogicalId(strict.stack.alarms.handlerFailures.node.defaultChild as CfnElement)
      ]?.Properties.Threshold,
    ).toBe(0);
  });

  it("alarms when SNS could not deliver to the queue (the subscription's DLQ is not empty)", () => {
    const undelivered = alarm(stack.alarms.undeliveredBySns);
    expect(undelivered).toMatchObject({ Threshold: 0, ComparisonOperator: "GreaterThanThreshold" });
    const queues = (undelivered.Metrics ?? []).flatMap((metric) =>
      metric.MetricStat ? [metric.MetricStat.Metric.Dimensions] : [],
    );
    const subscriptionDlq = [
      {
        Name: "QueueName",
        Value: { "Fn::GetAtt": [id(stack.messaging.subscriptionDeadLetterQueue), "QueueName"] },
      },
    ];
    expect(queues).toEqual([subscriptionDlq, subscriptionDlq]);
    notifiesTheTopic(undelivered);
  });
});

describe("what every service promises", () => {
  for (const [name, daemon] of Object.entries(daemons)) {
    const alarms = serviceAlarms[name as keyof typeof serviceAlarms];

    it(`${name}: alarms on every stop that ends in an unclean drain`, () => {
      if (!daemon || !alarms) throw new Error(`${name} is not deployed`);
      expect(metricFilters(daemon.logGroup)).toContainEqual(
        countsLines("unclean_drains", `{ ($.msg = "${LOGGED.drained}") && ($.clean IS FALSE) }`),
      );
      const unclean = alarm(alarms.uncleanDrains);
      expect(unclean).toMatchObject({
        MetricName: "unclean_drains",
        Dimensions: [{ Name: "service", Value: name }],
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
      });
      notifiesTheTopic(unclean);
    });

    it(`${name}: catches tasks killed with exit ${SIGKILL_EXIT_CODE} from ECS, in any revision, and says which and why`, () => {
      if (!daemon || !alarms) throw new Error(`${name} is not deployed`);
      const rule = template.findResources("AWS::Events::Rule")[id(alarms.killedTaskRule)]?.Properties;
      expect(rule.EventPattern).toEqual({
        source: ["aws.ecs"],
        "detail-type": ["ECS Task State Change"],
        detail: {
          lastStatus: ["STOPPED"],
          taskDefinitionArn: [
            {
              prefix: {
                "Fn::Join": [
                  "",
                  [
                    "arn:",
                    { Ref: "AWS::Partition" },
                    ":ecs:",
                    { Ref: "AWS::Region" },
                    ":",
                    { Ref: "AWS::AccountId" },
                    `:task-definition/${daemon.taskDefinition.family}:`,
                  ],
                ],
              },
            },
          ],
          containers: { exitCode: [SIGKILL_EXIT_CODE] },
        },
      });
      expect(rule.Targets).toEqual([
        expect.objectContaining({
          Arn: alarmTopic,
          InputTransformer: {
            InputPathsMap: {
              "detail-taskArn": "$.detail.taskArn",
              "detail-stoppedReason": "$.detail.stoppedReason",
            },
            InputTemplate: `"${name}: task <detail-taskArn> was killed (exit ${SIGKILL_EXIT_CODE}); stopped reason: <detail-stoppedReason>"`,
          },
        }),
      ]);
      const killed = alarm(alarms.tasksKilled);
      expect(killed).toMatchObject({
        Namespace: "AWS/Events",
        MetricName: "TriggeredRules",
        Dimensions: [{ Name: "RuleName", Value: { Ref: id(alarms.killedTaskRule) } }],
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
      });
      notifiesTheTopic(killed);
    });

    it(`${name}: alarms when fewer tasks run than desired for 5 minutes`, () => {
      if (!daemon || !alarms) throw new Error(`${name} is not deployed`);
      const below = alarm(alarms.belowDesired);
      expect(below).toMatchObject({ Threshold: 0, EvaluationPeriods: 5, DatapointsToAlarm: 5 });
      expect(below.Metrics?.find((metric) => metric.Expression)?.Expression).toBe("desired - running");
      const insights = (below.Metrics ?? []).flatMap((metric) =>
        metric.MetricStat ? [{ ...metric.MetricStat.Metric, Stat: metric.MetricStat.Stat }] : [],
      );
      const dimensions = [
        { Name: "ClusterName", Value: { Ref: id(daemon.service.cluster) } },
        { Name: "ServiceName", Value: { "Fn::GetAtt": [id(daemon.service), "Name"] } },
      ];
      expect(insights).toEqual(
        expect.arrayContaining([
          {
            Namespace: "ECS/ContainerInsights",
            MetricName: "DesiredTaskCount",
            Dimensions: dimensions,
            Stat: "Minimum",
          },
          {
            Namespace: "ECS/ContainerInsights",
            MetricName: "RunningTaskCount",
            Dimensions: dimensions,
            Stat: "Maximum",
          },
        ]),
      );
      notifiesTheTopic(below);
    });
  }

  it("let EventBridge publish the killed-task events to the alarm topic", () => {
    const statements = Object.values(template.findResources("AWS::SNS::TopicPolicy"))
      .filter((policy) => JSON.stringify(policy.Properties.Topics) === JSON.stringify([alarmTopic]))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: "Allow",
        Action: "sns:Publish",
        Principal: { Service: "events.amazonaws.com" },
        Resource: alarmTopic,
      }),
    );
  });
});

describe("deployments", () => {
  it("roll back on their own when the new tasks get killed or break what the service promises", () => {
    const expected = {
      relay: [stack.relayAlarms.tasksKilled, stack.alarms.deadEvents],
      consumer: [stack.consumerAlarms.tasksKilled, stack.alarms.handlerFailures],
      api: [stack.apiAlarms?.tasksKilled, stack.apiLoadBalancer?.errors5xx],
    };
    for (const [name, alarms] of Object.entries(expected)) {
      const service = daemons[name as keyof typeof daemons]?.service;
      if (!service) throw new Error(`${name} is not deployed`);
      const configuration =
        template.findResources("AWS::ECS::Service")[id(service)]?.Properties.DeploymentConfiguration;
      expect(configuration).toMatchObject({
        DeploymentCircuitBreaker: { Enable: true, Rollback: true },
        Alarms: {
          Enable: true,
          Rollback: true,
          AlarmNames: alarms.map((each) => {
            if (!each) throw new Error(`${name}: an alarm is missing`);
            return { Ref: id(each) };
          }),
        },
      });
    }
  });
});

describe("the log lines the filters match", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const source = (file: string) => fs.readFileSync(path.join(root, file), "utf8");

  it("are still what the daemons log", () => {
    expect(source("packages/shared/src/lifecycle/run-daemon.ts")).toContain(`"${LOGGED.drained}");`);
    expect(source("packages/shared/src/lifecycle/run-daemon.ts")).toMatch(/readonly clean: boolean;/);
    expect(source("apps/relay/src/batch.ts")).toContain(`"${LOGGED.eventDead}");`);
    expect(source("apps/consumer/src/message/fate.ts")).toContain(`"${LOGGED.messageFailed}",`);
  });

  it("carry the `service` the alarms expect as their dimension", () => {
    expect(source("packages/shared/src/log/logger.ts")).toMatch(/base: \{ service: settings\.service/);
    // Where each daemon hands runDaemon its service name.
    const entries: Record<string, string> = {
      relay: "apps/relay/src/run-relay.ts",
      consumer: "apps/consumer/src/run-consumer.ts",
      api: "apps/api/src/daemon.ts",
    };
    for (const name of Object.keys(daemons)) {
      expect(source(entries[name] ?? `apps/${name}/src/daemon.ts`)).toMatch(new RegExp(`service: "${name}"`));
    }
  });
});
