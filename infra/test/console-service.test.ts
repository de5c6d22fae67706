import { consoleSettings } from "@outbox/console";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import { describe, expect, it } from "vitest";
import { CONSOLE_PORT } from "../lib/console-service.js";
import { container, environmentOf, policyStatements, synth } from "./support/synth.js";

const USERS = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:outbox-console-users-AbCdEf";

describe("the operator console on ECS", () => {
  it("is not deployed without its option: no service, no load balancer of its own", () => {
    const { stack, template } = synth();
    expect(stack.console).toBeUndefined();
    expect(template.findResources("AWS::ECS::Service")).toSatisfy((services: Record<string, unknown>) =>
      Object.keys(services).every((id) => !id.startsWith("Console")),
    );
    expect(Object.keys(template.findResources("AWS::ElasticLoadBalancingV2::LoadBalancer"))).toEqual([]);
  });

  const { template } = synth({
    console: {
      image: ecs.ContainerImage.fromRegistry("outbox-console:0.1.0"),
      usersSecretArn: USERS,
      certificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/console",
      allowFrom: [ec2.Peer.ipv4("10.20.0.0/16")],
    },
  });

  it("with it: one task off by default (desired 0), bound to every address, its operators from the secret", () => {
    const services = Object.entries(template.findResources("AWS::ECS::Service")).filter(([id]) =>
      id.startsWith("Console"),
    );
    expect(services).toHaveLength(1);
    expect(services[0]?.[1].Properties.DesiredCount).toBe(0);
    const definition = container(template, "console");
    const environment = environmentOf(definition);
    expect(environment.CONSOLE_HOST).toBe("0.0.0.0");
    expect(environment.CONSOLE_PORT).toBe(String(CONSOLE_PORT));
    expect(environment.CONSOLE_PORT).toBe(String(consoleSettings.port.default));
    expect((definition.Secrets ?? []).map((secret) => secret.Name).sort()).toEqual([
      "CONSOLE_USERS",
      "DATABASE_URL",
    ]);
    expect(JSON.stringify(definition.Secrets)).toContain(USERS);
    // Every variable it is given is one the console reads.
    const own = new Set(Object.values(consoleSettings).map((each) => each.env));
    for (const name of [...Object.keys(environment), "CONSOLE_USERS", "DATABASE_URL"])
      expect(own).toContain(name);
  });

  it("behind an internal ALB of its own, HTTPS, reached from the operators' network only", () => {
    const balancers = Object.values(template.findResources("AWS::ElasticLoadBalancingV2::LoadBalancer"));
    expect(balancers).toHaveLength(1);
    expect(balancers[0]?.Properties.Scheme).toBe("internal");
    const listeners = Object.values(template.findResources("AWS::ElasticLoadBalancingV2::Listener"));
    expect(listeners.map((listener) => [listener.Properties.Port, listener.Properties.Protocol])).toEqual([
      [443, "HTTPS"],
    ]);
    const groups = Object.values(template.findResources("AWS::ElasticLoadBalancingV2::TargetGroup"));
    expect(groups[0]?.Properties).toMatchObject({
      Port: CONSOLE_PORT,
      HealthCheckPath: "/",
      Matcher: { HttpCode: "200,401" },
    });
    const ingress = Object.entries(template.findResources("AWS::EC2::SecurityGroup"))
      .filter(([id]) => id.startsWith("Console"))
      .map(([, group]) => group)
      .flatMap(
        (group) => (group.Properties.SecurityGroupIngress ?? []) as { CidrIp?: string; FromPort?: number }[],
      );
    const open = ingress.filter((rule) => rule.CidrIp !== undefined);
    expect(open).toEqual([expect.objectContaining({ CidrIp: "10.20.0.0/16", FromPort: 443 })]);
  });

  it("may do what its commands do: read and redrive the DLQ, republish to the topic, look for a claim-checked object", () => {
    const actions = new Set(
      policyStatements(template)
        .filter((found) => found.where.startsWith("Console"))
        .flatMap(({ statement }) => [statement.Action].flat() as string[]),
    );
    for (const action of [
      "sqs:ReceiveMessage",
      "sqs:DeleteMessage",
      "sqs:ChangeMessageVisibility",
      "sqs:SendMessage",
      "sqs:GetQueueAttributes",
      "sns:Publish",
      "sns:GetTopicAttributes",
      "s3:GetObject",
      "s3:ListBucket",
    ]) {
      expect(actions).toContain(action);
    }
  });
});
