import { Duration } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as elbv2 from "aws-cdk-lib/aws-elasticloadbalancingv2";
import * as iam from "aws-cdk-lib/aws-iam";
import * as logs from "aws-cdk-lib/aws-logs";
import * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import type { ClaimCheckBucket } from "./claim-check-bucket.js";
import type { Messaging } from "./messaging.js";

/** The console's port in its task (CONSOLE_PORT; the image's default). */
export const CONSOLE_PORT = 4000;

/** The operator console (apps/console) on ECS: not deployed without these options. */
export interface ConsoleServiceOptions {
  /** The image (the Dockerfile's `console` target). */
  readonly image: ecs.ContainerImage;
  /** The secret holding CONSOLE_USERS (`name:read-write:password` lines): the operators. */
  readonly usersSecretArn: string;
  /** ACM certificate ARN: an HTTPS:443 listener. Without one, HTTP:80 (basic auth in clear text on the VPC). */
  readonly certificateArn?: string;
  /** Who may reach the load balancer: the operators' networks. Default: none (add rules yourself). */
  readonly allowFrom?: readonly ec2.IPeer[];
  /** Default 0: a person starts it while on call (`aws ecs update-service --desired-count 1`). */
  readonly desiredCount?: number;
  /** CONSOLE_REPUBLISH_RUNS. Default the console's (2). */
  readonly republishRuns?: number;
}

export interface ConsoleServiceProps {
  readonly options: ConsoleServiceOptions;
  readonly cluster: ecs.ICluster;
  readonly vpc: ec2.IVpc;
  readonly taskSubnets: ec2.SubnetSelection;
  readonly loadBalancerSubnets?: ec2.SubnetSelection;
  readonly databaseUrlSecret: secretsmanager.ISecret;
  readonly databaseUrlSecretField?: string;
  readonly messaging: Messaging;
  readonly claimCheck: ClaimCheckBucket;
  /** The outbox topic names the relay routes to the stack's topic (RELAY_TOPIC_ARNS). */
  readonly topicArns: string;
  readonly logRetention?: logs.RetentionDays;
}

/**
 * The console as a one-task Fargate service behind an internal ALB of its own: bound to every
 * address in its task, so it refuses to start without its operators (CONSOLE_USERS, from Secrets
 * Manager); reached from `allowFrom` only. Its task role may do what the commands it runs do: read
 * and redrive the DLQ, republish to the topic, look for a claim-checked object.
 */
export class ConsoleService extends Construct {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly service: ecs.FargateService;
  readonly container: ecs.ContainerDefinition;
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;

  constructor(scope: Construct, id: string, props: ConsoleServiceProps) {
    super(scope, id);
    const { options, messaging } = props;
    const taskDefinition = new ecs.FargateTaskDefinition(this, "Task", { cpu: 256, memoryLimitMiB: 512 });
    this.taskDefinition = taskDefinition;
    const users = secretsmanager.Secret.fromSecretCompleteArn(this, "Users", options.usersSecretArn);
    this.container = taskDefinition.addContainer("console", {
      image: options.image,
      environment: {
        CONSOLE_HOST: "0.0.0.0",
        CONSOLE_PORT: String(CONSOLE_PORT),
        CONSUMER_QUEUE_URL: messaging.queue.queueUrl,
        CONSUMER_DLQ_URL: messaging.deadLetterQueue.queueUrl,
        RELAY_TOPIC_ARNS: props.topicArns,
        ...(options.republishRuns === undefined
          ? {}
          : { CONSOLE_REPUBLISH_RUNS: String(options.republishRuns) }),
      },
      secrets: {
        DATABASE_URL: props.databaseUrlSecretField
          ? ecs.Secret.fromSecretsManager(props.databaseUrlSecret, props.databaseUrlSecretField)
          : ecs.Secret.fromSecretsManager(props.databaseUrlSecret),
        CONSOLE_USERS: ecs.Secret.fromSecretsManager(users),
      },
      portMappings: [{ containerPort: CONSOLE_PORT, protocol: ecs.Protocol.TCP }],
      logging: ecs.LogDrivers.awsLogs({
        streamPrefix: "console",
        logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      }),
      // PID 1 forwards SIGTERM to node: a run in hand ends after its page, resumable.
      linuxParameters: new ecs.LinuxParameters(this, "Linux", { initProcessEnabled: true }),
      stopTimeout: Duration.seconds(30),
    });
    this.service = new ecs.FargateService(this, "Service", {
      cluster: props.cluster,
      taskDefinition,
      vpcSubnets: props.taskSubnets,
      desiredCount: options.desiredCount ?? 0,
      assignPublicIp: false,
    });
    const role = taskDefinition.taskRole;
    // `consumer dlq list` and `consumer redrive`: receive and delete on the DLQ, send to the queue.
    messaging.deadLetterQueue.grantConsumeMessages(role);
    messaging.queue.grantSendMessages(role);
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["sqs:GetQueueAttributes"],
        resources: [messaging.queue.queueArn, messaging.deadLetterQueue.queueArn],
      }),
    );
    // `relay republish`: Publish (PublishBatch) and the topic's message size limit.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ["sns:Publish", "sns:GetTopicAttributes"],
        resources: [messaging.topic.topicArn],
      }),
    );
    props.claimCheck.grantRead(role);

    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, "Alb", {
      vpc: props.vpc,
      internetFacing: false,
      ...(props.loadBalancerSubnets ? { vpcSubnets: props.loadBalancerSubnets } : {}),
    });
    const targets = new elbv2.ApplicationTargetGroup(this, "Targets", {
      vpc: props.vpc,
      port: CONSOLE_PORT,
      protocol: elbv2.ApplicationProtocol.HTTP,
      targetType: elbv2.TargetType.IP,
      deregistrationDelay: Duration.seconds(5),
      // Alive is answering: a page asks for credentials (401).
      healthCheck: { path: "/", healthyHttpCodes: "200,401", interval: Duration.seconds(15) },
    });
    targets.addTarget(
      this.service.loadBalancerTarget({
        containerName: this.container.containerName,
        containerPort: CONSOLE_PORT,
      }),
    );
    const listener = options.certificateArn
      ? this.loadBalancer.addListener("Https", {
          port: 443,
          protocol: elbv2.ApplicationProtocol.HTTPS,
          certificates: [elbv2.ListenerCertificate.fromArn(options.certificateArn)],
          sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS,
          defaultTargetGroups: [targets],
          open: false,
        })
      : this.loadBalancer.addListener("Http", {
          port: 80,
          protocol: elbv2.ApplicationProtocol.HTTP,
          defaultTargetGroups: [targets],
          open: false,
        });
    for (const peer of options.allowFrom ?? []) {
      listener.connections.allowDefaultPortFrom(peer, "operators → console");
    }
  }
}
