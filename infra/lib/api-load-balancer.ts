import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as elbv2 from "aws-cdk-lib/aws-elasticloadbalancingv2";
import type * as sns from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";
import type { ApiBudget } from "./budget.js";
import type { DaemonService } from "./daemon-service.js";

export interface ApiLoadBalancerProps {
  readonly vpc: ec2.IVpc;
  /** Default: CDK's choice in the VPC (private subnets when internal, public when internet-facing). */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** ACM certificate ARN: an HTTPS:443 listener, and HTTP:80 redirecting to it. */
  readonly certificateArn?: string;
  readonly api: DaemonService;
  readonly budget: ApiBudget;
  /** Default false: an internal ALB, reachable from inside the VPC only. */
  readonly internetFacing?: boolean;
  /** Alarm when the 99th percentile of the targets' response time exceeds this. Default 5 s. */
  readonly p99Threshold?: Duration;
  /** Alarm when the targets answer more 5xx than this per minute. Default 5. */
  readonly errors5xxPerMinute?: number;
  /**
   * Alarm when the load balancer answers 502/503/504 itself, or fails to connect to a target, more
   * often than this per minute. Default 0: a request dropped there is lost silently.
   */
  readonly loadBalancerDropsPerMinute?: number;
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The photo service behind an Application Load Balancer: idle timeout 60 s, below the service's 65 s
 * keep-alive, so the balancer always closes an idle connection first (no 502 from a reused socket);
 * health check on /readyz, which answers 503 from the first moment of a stop; a deregistration delay
 * that outlasts the longest request; alarms on 5xx, on the load balancer's own drops and on p99
 * latency.
 */
export class ApiLoadBalancer extends Construct {
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly targetGroup: elbv2.ApplicationTargetGroup;
  readonly errors5xx: cloudwatch.Alarm;
  /** Requests the load balancer dropped: what a stop race costs, which `errors5xx` never sees. */
  readonly loadBalancerDrops: cloudwatch.Alarm;
  readonly p99Latency: cloudwatch.Alarm;
  /** How clients reach it: `https` with a certificate, else `http`. */
  readonly scheme: "http" | "https";

  constructor(scope: Construct, id: string, props: ApiLoadBalancerProps) {
    super(scope, id);
    const { budget, api } = props;
    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, "Alb", {
      vpc: props.vpc,
      internetFacing: props.internetFacing ?? false,
      ...(props.vpcSubnets ? { vpcSubnets: props.vpcSubnets } : {}),
      idleTimeout: Duration.seconds(budget.loadBalancerIdleTimeoutSeconds),
    });
    api.container.addPortMappings({ containerPort: budget.port, protocol: ecs.Protocol.TCP });
    this.targetGroup = new elbv2.ApplicationTargetGroup(this, "Targets", {
      vpc: props.vpc,
      port: budget.port,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targetType: elbv2.TargetType.IP,
      deregistrationDelay: Duration.seconds(budget.deregistrationDelaySeconds),
      healthCheck: {
        path: "/readyz",
        port: String(budget.opsPort),
        interval: Duration.seconds(10),
        timeout: Duration.seconds(5),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 2,
      },
    });
    this.targetGroup.addTarget(
      api.service.loadBalancerTarget({
        containerName: api.container.containerName,
        containerPort: budget.port,
      }),
    );
    this.scheme = props.certificateArn ? "https" : "http";
    if (props.certificateArn) {
      this.loadBalancer.addListener("Https", {
        port: 443,
        protocol: elbv2.ApplicationProtocol.HTTPS,
        certificates: [elbv2.ListenerCertificate.fromArn(props.certificateArn)],
        sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS,
        defaultTargetGroups: [this.targetGroup],
      });
      // Port 80 stays open for clients that type the bare name; it never forwards a request.
      this.loadBalancer.addRedirect({ sourcePort: 80, targetPort: 443 });
    } else {
      this.loadBalancer.addListener("Http", {
        port: 80,
        protocol: elbv2.ApplicationProtocol.HTTP,
        defaultTargetGroups: [this.targetGroup],
      });
    }
    // The health check reaches the ops port, which no listener forwards to.
    api.service.connections.allowFrom(this.loadBalancer, ec2.Port.tcp(budget.opsPort), "ALB → /readyz");

    const minute = Duration.minutes(1);
    this.errors5xx = this.targetGroup.metrics
      .httpCodeTarget(elbv2.HttpCodeTarget.TARGET_5XX_COUNT, { period: minute, statistic: "Sum" })
      .createAlarm(this, "Target5xx", {
        alarmDescription: "The photo service answers 5xx.",
        threshold: props.errors5xxPerMinute ?? 5,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    // Each count exists only in a minute that had one: FILL makes a quiet minute 0, not missing.
    const loadBalancerCount = (metricName: string) =>
      this.loadBalancer.metrics.custom(metricName, { period: minute, statistic: "Sum" });
    this.loadBalancerDrops = new cloudwatch.MathExpression({
      expression: "FILL(elb502, 0) + FILL(elb503, 0) + FILL(elb504, 0) + FILL(targetConnectionErrors, 0)",
      usingMetrics: {
        elb502: loadBalancerCount("HTTPCode_ELB_502_Count"),
        elb503: loadBalancerCount("HTTPCode_ELB_503_Count"),
        elb504: loadBalancerCount("HTTPCode_ELB_504_Count"),
        targetConnectionErrors: loadBalancerCount("TargetConnectionErrorCount"),
      },
      label: "requests the load balancer dropped",
      period: minute,
    }).createAlarm(this, "LoadBalancerDrops", {
      alarmDescription: loadBalancerDropsDescription(budget),
      threshold: props.loadBalancerDropsPerMinute ?? 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const p99 = props.p99Threshold ?? Duration.seconds(5);
    this.p99Latency = this.targetGroup.metrics
      .targetResponseTime({ period: minute, statistic: "p99" })
      .createAlarm(this, "P99Latency", {
        alarmDescription: `The photo service's p99 response time is over ${p99.toHumanString()}.`,
        threshold: p99.toSeconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    if (props.alarmTopic) {
      const action = new actions.SnsAction(props.alarmTopic);
      for (const alarm of [this.errors5xx, this.loadBalancerDrops, this.p99Latency]) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }
  }
}

/**
 * What the load balancer's drops mean and the remedy: the stop settings `pnpm plan` recommends for
 * this service on ECS (packages/termination-race), which the stack deploys; infra/test checks they
 * are the planner's. The propagation is the margin the deregistration delay keeps beyond the longest
 * request.
 */
export function loadBalancerDropsDescription(budget: ApiBudget): string {
  const longestRequestS = budget.handlerTimeoutMs / 1000;
  const drainS = (budget.drainTimeoutMs + budget.shutdownOverheadMs) / 1000;
  const propagationS = budget.deregistrationDelaySeconds - Math.ceil(longestRequestS);
  return (
    "The load balancer answered 502/503/504 in the photo service's place, or could not connect to a task " +
    "(TargetConnectionErrorCount): requests dropped before the service saw them, which its own 5xx alarm never counts. " +
    "During a deployment or a scale-in this is the stop race: a task stopped while the load balancer still routed to it. " +
    `Remedy: the stop settings \`pnpm plan --platform ecs --propagation ${propagationS}s --longest-request ${longestRequestS}s ` +
    `--drain ${drainS}s\` recommends, deregistration delay ${budget.deregistrationDelaySeconds} s and stopTimeout ` +
    `${budget.stopTimeoutSeconds} s (on Kubernetes, its preStop and terminationGracePeriodSeconds): check that ` +
    "the target group and the task definition still carry them, and that the propagation still holds."
  );
}
