import { apiSettings } from "@outbox/api";
import { plan } from "@outbox/termination-race";
import type { CfnElement } from "aws-cdk-lib";
import { Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { apiBudget, startupProblems } from "../lib/budget.js";
import { container, environmentOf, synth, XRAY_WRITE_ACTIONS } from "./support/synth.js";

const { stack, template } = synth({ api: { equipmentUrl: "http://equipment.internal:8080" } });
const budget = apiBudget();

describe("api budget", () => {
  it("derives the stop, the deregistration delay and the idle timeouts from the service's settings", () => {
    expect(budget).toMatchObject({
      drainTimeoutMs: apiSettings.drainTimeoutMs.default,
      shutdownOverheadMs: apiSettings.shutdownOverheadMs.default,
      handlerTimeoutMs: 25_000,
      loadBalancerIdleTimeoutSeconds: 60,
      keepAliveTimeoutMs: 65_000,
    });
    // The stop outlasts the drain and the shutdown; the load balancer waits out the longest request.
    expect(budget.stopTimeoutMs).toBeGreaterThan(budget.drainTimeoutMs + budget.shutdownOverheadMs);
    expect(budget.deregistrationDelaySeconds * 1000).toBeGreaterThan(budget.handlerTimeoutMs);
    expect(budget.loadBalancerIdleTimeoutSeconds * 1000).toBeLessThan(budget.keepAliveTimeoutMs);
  });

  it("a task whose keep-alive is not longer than the load balancer's idle timeout would not start", () => {
    expect(
      startupProblems("api", {
        API_EQUIPMENT_URL: "http://equipment",
        API_LB_IDLE_TIMEOUT_MS: "60000",
        API_KEEP_ALIVE_TIMEOUT_MS: "60000",
      }),
    ).toEqual([
      expect.stringMatching(/^API_LB_IDLE_TIMEOUT_MS: .* must be less than API_KEEP_ALIVE_TIMEOUT_MS/),
    ]);
  });
});

describe("api service", () => {
  it("runs behind an ALB whose idle timeout is below the service's keep-alive", () => {
    template.hasResourceProperties("AWS::ElasticLoadBalancingV2::LoadBalancer", {
      Scheme: "internal",
      LoadBalancerAttributes: Match.arrayWith([{ Key: "idle_timeout.timeout_seconds", Value: "60" }]),
    });
    const env = environmentOf(container(template, "api"));
    expect(env).toMatchObject({
      API_LB_IDLE_TIMEOUT_MS: "60000",
      API_KEEP_ALIVE_TIMEOUT_MS: "65000",
      API_DRAIN_TIMEOUT_MS: String(budget.drainTimeoutMs),
      STOP_TIMEOUT_MS: String(budget.stopTimeoutMs),
      SHUTDOWN_OVERHEAD_MS: String(budget.shutdownOverheadMs),
      API_EQUIPMENT_URL: "http://equipment.internal:8080",
      API_PHOTO_TOPIC: "photos",
    });
    expect(container(template, "api").StopTimeout).toBe(budget.stopTimeoutSeconds);
  });

  it("health-checks readiness on the ops port and drains targets for longer than the longest request", () => {
    template.hasResourceProperties("AWS::ElasticLoadBalancingV2::TargetGroup", {
      HealthCheckPath: "/readyz",
      HealthCheckPort: String(budget.opsPort),
      Port: budget.port,
      TargetType: "ip",
      TargetGroupAttributes: Match.arrayWith([
        { Key: "deregistration_delay.timeout_seconds", Value: String(budget.deregistrationDelaySeconds) },
      ]),
    });
  });

  /** The policies attached to the photo service's task role in `of`. */
  const taskRolePolicies = (of: ReturnType<typeof synth>) => {
    const taskRole = of.stack.api?.taskRole;
    expect(taskRole).toBeDefined();
    const roleId = of.stack.resolve((taskRole as { roleName: string }).roleName) as { Ref: string };
    return Object.values(of.template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy.Properties.Roles).includes(roleId.Ref),
    );
  };

  it("gives the task role its collector's permissions only: the service only talks to Postgres and HTTP", () => {
    const statements = taskRolePolicies({ stack, template }).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement,
    );
    expect(statements).toEqual([
      {
        Effect: "Allow",
        Action: ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
        Resource: { "Fn::GetAtt": [expect.stringMatching(/^ApiMetricsEmfLogs/), "Arn"] },
      },
      { Effect: "Allow", Action: XRAY_WRITE_ACTIONS, Resource: "*" },
    ]);
    // Without the collector: no permission at all.
    const bare = synth({
      api: { equipmentUrl: "http://equipment.internal:8080" },
      telemetry: { metrics: false, traces: false },
    });
    expect(taskRolePolicies(bare)).toEqual([]);
  });

  it("alarms on 5xx and on p99 latency", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "HTTPCode_Target_5XX_Count",
      Namespace: "AWS/ApplicationELB",
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "TargetResponseTime",
      ExtendedStatistic: "p99",
    });
  });

  it("alarms on the requests the load balancer drops (its own 502/503/504, failed target connections), naming the planner's stop settings as the remedy", () => {
    const drops = stack.apiLoadBalancer?.loadBalancerDrops;
    if (!drops) throw new Error("the api has no load balancer drops alarm");
    const alarm =
      template.findResources("AWS::CloudWatch::Alarm")[
        stack.getLogicalId(drops.node.defaultChild as CfnElement)
      ];
    if (!alarm) throw new Error("the drops alarm is not in the template");
    const properties = alarm.Properties;
    // Any one dropped request, in any minute.
    expect(properties).toMatchObject({ ComparisonOperator: "GreaterThanThreshold", Threshold: 0 });
    const loadBalancer = Object.keys(template.findResources("AWS::ElasticLoadBalancingV2::LoadBalancer"));
    const counted = (
      properties.Metrics as { MetricStat?: { Metric: Record<string, unknown>; Stat: string } }[]
    )
      .flatMap((query) => (query.MetricStat ? [query.MetricStat] : []))
      .map((stat) => {
        expect(stat.Stat).toBe("Sum");
        expect(stat.Metric.Namespace).toBe("AWS/ApplicationELB");
        expect(JSON.stringify(stat.Metric.Dimensions)).toContain(loadBalancer[0]);
        return stat.Metric.MetricName;
      });
    expect(counted.sort()).toEqual([
      "HTTPCode_ELB_502_Count",
      "HTTPCode_ELB_503_Count",
      "HTTPCode_ELB_504_Count",
      "TargetConnectionErrorCount",
    ]);
    const expression = (properties.Metrics as { Expression?: string; ReturnData?: boolean }[]).find(
      (query) => query.Expression !== undefined,
    );
    expect(expression?.Expression).toMatch(
      /FILL\(elb502, 0\).*FILL\(elb503, 0\).*FILL\(elb504, 0\).*FILL\(targetConnectionErrors, 0\)/,
    );
    expect(properties.AlarmActions).toHaveLength(1);

    // The remedy it names: the planner's recommendation for the command it quotes, which is what
    // the stack deploys.
    const description = String(properties.AlarmDescription);
    expect(description.length).toBeLessThanOrEqual(1024);
    const command = description.match(/--propagation (\d+)s --longest-request (\d+)s --drain (\d+)s/);
    const named = description.match(/deregistration delay (\d+) s and stopTimeout (\d+) s/);
    if (!command || !named) throw new Error(`no planner command or settings in: ${description}`);
    const recommended = plan({
      platform: "ecs",
      propagationMs: Number(command[1]) * 1000,
      longestRequestMs: Number(command[2]) * 1000,
      drainMs: Number(command[3]) * 1000,
    }).recommended;
    expect(recommended).toEqual({
      platform: "ecs",
      deregistrationDelaySeconds: Number(named[1]),
      stopTimeoutSeconds: Number(named[2]),
    });
    expect(Number(command[2]) * 1000).toBe(budget.handlerTimeoutMs);
    expect(Number(command[3]) * 1000).toBe(budget.drainTimeoutMs + budget.shutdownOverheadMs);
    expect(Number(named[1])).toBe(budget.deregistrationDelaySeconds);
    expect(Number(named[2])).toBe(container(template, "api").StopTimeout);
  });

  it("routes photo.posted to the stack's topic through the relay", () => {
    const relayEnv = environmentOf(container(template, "relay"));
    expect(JSON.stringify(relayEnv.RELAY_TOPIC_ARNS)).toContain("photos=");
  });

  it("is not deployed without an equipment service", () => {
    expect(synth().template.findResources("AWS::ElasticLoadBalancingV2::LoadBalancer")).toEqual({});
  });
});
