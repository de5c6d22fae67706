import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { hangLimit } from "@outbox/test-kit";
import { Annotations, Match } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { stackPropsFromContext } from "../lib/stack-context.js";
import { container, environmentOf, synth } from "./support/synth.js";

const VPC = "vpc-0123456789abcdef0";
const TASK_SUBNETS = ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"];
const PUBLIC_SUBNETS = ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2"];
const DATABASE_SG = "sg-0123456789abcdef0";
const CERTIFICATE = "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-aaaa-bbbb-cccc-0123456789ab";
const EQUIPMENT = "https://equipment.internal/";

/** The stack as bin/app.ts builds it from these context values. */
function synthFromContext(values: Record<string, string>) {
  return synth(stackPropsFromContext((key) => values[key]));
}

const existing = { vpcId: VPC, subnetIds: TASK_SUBNETS.join(","), databaseSecurityGroupId: DATABASE_SG };

describe("an existing VPC, subnets and database security group by context", () => {
  const { template } = synthFromContext({ ...existing, equipmentUrl: EQUIPMENT });

  it("creates no network of its own", () => {
    for (const type of [
      "AWS::EC2::VPC",
      "AWS::EC2::Subnet",
      "AWS::EC2::NatGateway",
      "AWS::EC2::VPCEndpoint",
    ]) {
      template.resourceCountIs(type, 0);
    }
  });

  it("runs every service and scheduled task in the given subnets, in security groups of the given VPC", () => {
    const services = Object.values(template.findResources("AWS::ECS::Service"));
    expect(services).toHaveLength(3);
    for (const service of services) {
      expect(service.Properties.NetworkConfiguration.AwsvpcConfiguration.Subnets).toEqual(TASK_SUBNETS);
    }
    const schedules = Object.values(template.findResources("AWS::Scheduler::Schedule"));
    expect(schedules).toHaveLength(1);
    expect(
      schedules[0]?.Properties.Target.EcsParameters.NetworkConfiguration.AwsvpcConfiguration.Subnets,
    ).toEqual(TASK_SUBNETS);
    for (const group of Object.values(template.findResources("AWS::EC2::SecurityGroup"))) {
      expect(group.Properties.VpcId).toBe(VPC);
    }
  });

  it("lets each service into the database's security group on 5432", () => {
    const ingress = Object.values(template.findResources("AWS::EC2::SecurityGroupIngress"))
      .map((rule) => rule.Properties)
      .filter((rule) => rule.GroupId === DATABASE_SG);
    expect(ingress.map((rule) => rule.Description).sort()).toEqual([
      "api → Postgres",
      "consumer → Postgres",
      "relay → Postgres",
    ]);
    for (const rule of ingress)
      expect(rule).toMatchObject({ FromPort: 5432, ToPort: 5432, IpProtocol: "tcp" });
  });

  it("puts the migration's run-task command in the given subnets", () => {
    const output = template.findOutputs("MigrateCommand").MigrateCommand;
    expect(JSON.stringify(output)).toContain(`subnets=[${TASK_SUBNETS.join(",")}]`);
  });

  it("puts an internal ALB in the task subnets, an internet-facing one in loadBalancerSubnetIds", () => {
    const alb = (t: typeof template) =>
      Object.values(t.findResources("AWS::ElasticLoadBalancingV2::LoadBalancer"))[0]?.Properties;
    expect(alb(template)).toMatchObject({ Scheme: "internal", Subnets: TASK_SUBNETS });
    const { template: facing } = synthFromContext({
      ...existing,
      equipmentUrl: EQUIPMENT,
      internetFacing: "true",
      certificateArn: CERTIFICATE,
      loadBalancerSubnetIds: PUBLIC_SUBNETS.join(","),
    });
    expect(alb(facing)).toMatchObject({ Scheme: "internet-facing", Subnets: PUBLIC_SUBNETS });
  });

  it("refuses what cannot describe a network, naming the value", () => {
    const refused = (values: Record<string, string>) => () => synthFromContext(values);
    expect(refused({ vpcId: VPC })).toThrow("vpcId needs subnetIds");
    expect(refused({ subnetIds: TASK_SUBNETS.join(",") })).toThrow(
      "subnetIds and loadBalancerSubnetIds need vpcId",
    );
    expect(refused({ ...existing, vpcId: "0123" })).toThrow('vpcId "0123" is not a VPC id');
    expect(refused({ ...existing, subnetIds: "subnet-0123456789abcdef0,sn-1" })).toThrow(
      "subnetIds: sn-1 is not a subnet id",
    );
    expect(refused({ ...existing, databaseSecurityGroupId: "default" })).toThrow(
      'databaseSecurityGroupId "default" is not a security group id',
    );
    expect(refused({ ...existing, natGateways: "2" })).toThrow("natGateways shapes the stack's own VPC");
    expect(refused({ ...existing, subnetIds: TASK_SUBNETS[0] ?? "", equipmentUrl: EQUIPMENT })).toThrow(
      "the photo service's ALB needs at least two subnets",
    );
  });
});

describe("the photo service's HTTPS listener", () => {
  const listeners = (values: Record<string, string>) =>
    Object.values(
      synthFromContext(values).template.findResources("AWS::ElasticLoadBalancingV2::Listener"),
    ).map((listener) => listener.Properties);

  it("serves HTTPS with the ACM certificate and answers HTTP with a redirect only", () => {
    const found = listeners({ equipmentUrl: EQUIPMENT, internetFacing: "true", certificateArn: CERTIFICATE });
    expect(found).toHaveLength(2);
    const https = found.find((listener) => listener.Port === 443);
    const http = found.find((listener) => listener.Port === 80);
    expect(https).toMatchObject({
      Protocol: "HTTPS",
      Certificates: [{ CertificateArn: CERTIFICATE }],
      SslPolicy: "ELBSecurityPolicy-TLS13-1-2-2021-06",
      DefaultActions: [{ Type: "forward" }],
    });
    expect(http).toMatchObject({
      Protocol: "HTTP",
      DefaultActions: [
        { Type: "redirect", RedirectConfig: { Protocol: "HTTPS", Port: "443", StatusCode: "HTTP_301" } },
      ],
    });
  });

  it("says https in the ApiUrl output", () => {
    const { template } = synthFromContext({ equipmentUrl: EQUIPMENT, certificateArn: CERTIFICATE });
    expect(JSON.stringify(template.findOutputs("ApiUrl"))).toContain("https://");
  });

  it("stays plain HTTP on an internal ALB without a certificate", () => {
    expect(listeners({ equipmentUrl: EQUIPMENT })).toMatchObject([
      { Port: 80, Protocol: "HTTP", DefaultActions: [{ Type: "forward" }] },
    ]);
  });

  it("is required when the ALB faces the internet, and must be an ACM ARN", () => {
    expect(() => synthFromContext({ equipmentUrl: EQUIPMENT, internetFacing: "true" })).toThrow(
      "api.internetFacing needs api.certificateArn",
    );
    expect(() => synthFromContext({ equipmentUrl: EQUIPMENT, certificateArn: "my-cert" })).toThrow(
      'api.certificateArn "my-cert" is not an ACM certificate ARN',
    );
  });
});

describe("bin/app.ts with bad context", { timeout: hangLimit({ synth: 1 }) }, () => {
  const app = fileURLToPath(new URL("../bin/app.ts", import.meta.url));

  /** Runs bin/app.ts with these arguments into a scratch cdk.out: its exit code and stderr. */
  async function synthesize(context: readonly string[]): Promise<{ code?: number; stderr: string }> {
    const outdir = mkdtempSync(join(tmpdir(), "outbox-synth-"));
    try {
      const args = ["--import", "tsx", "--conditions=development", app];
      // Bounded by the test's own timeout (a synth's hang limit): execFile is asynchronous, so vitest can end it.
      return await promisify(execFile)(process.execPath, [...args, ...context], {
        env: { ...process.env, CDK_OUTDIR: outdir },
      }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? "" }),
      );
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }

  it("fails the synth with one readable line and exit 78", async () => {
    const run = await synthesize(["-c", `equipmentUrl=${EQUIPMENT}`, "-c", "internetFacing=true"]);
    expect(run.code).toBe(78);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^infra: api\.internetFacing needs api\.certificateArn \(-c certificateArn=arn:aws:acm:/,
      ),
    ]);
  });

  it("refuses a stack whose constructs refuse it (a consumer without handlers) with exit 78, as the CDK CLI does", async () => {
    const run = await synthesize([]);
    expect(run.code).toBe(78);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^infra: consumer\.handlersModule \(context consumerHandlersModule\) is required/,
      ),
    ]);
  });
});

describe("the consumer's name by context", () => {
  it("is CONSUMER_NAME on its task; without it, unset, so the daemon takes its queue's name", () => {
    const named = synthFromContext({ consumerName: "billing" }).template;
    expect(environmentOf(container(named, "consumer")).CONSUMER_NAME).toBe("billing");
    const unnamed = synthFromContext({}).template;
    expect(environmentOf(container(unnamed, "consumer")).CONSUMER_NAME).toBeUndefined();
  });
});

describe("the claim checks' lifecycle by context", () => {
  it("is claimCheckExpirationDays, checked by the stack as the prop is", () => {
    expect(synthFromContext({ claimCheckExpirationDays: "60" }).stack.claimCheck.expirationDays).toBe(60);
    expect(() => synthFromContext({ claimCheckExpirationDays: "30" })).toThrow(
      /^claimCheckExpirationDays \(30\) is shorter than the longest a pointer can live/,
    );
    expect(() =>
      stackPropsFromContext((key) => (key === "claimCheckExpirationDays" ? "45d" : undefined)),
    ).toThrow('claimCheckExpirationDays must be a whole number of days, got "45d"');
  });
});

describe("handlers in the application's own image by context", () => {
  const errorsOf = (values: Record<string, string>) =>
    Annotations.fromStack(synthFromContext(values).stack)
      .findError("*", Match.anyValue())
      .map((message) => String(message.entry.data));

  it("sets no CONSUMER_HANDLERS_MODULE and needs none: the image's entry point runs runConsumer({ handlers })", () => {
    const { stack, template } = synthFromContext({ consumerHandlersInImage: "true" });
    expect(environmentOf(container(template, "consumer")).CONSUMER_HANDLERS_MODULE).toBeUndefined();
    expect(Annotations.fromStack(stack).findError("*", Match.anyValue())).toEqual([]);
  });

  it("refuses both ways at once, and neither", () => {
    expect(errorsOf({ consumerHandlersInImage: "true", consumerHandlersModule: "/app/handlers.js" })).toEqual(
      [expect.stringMatching(/^consumer\.handlersModule and consumer\.handlersInImage exclude each other/)],
    );
    expect(errorsOf({})).toEqual([expect.stringMatching(/consumerHandlersInImage=true/)]);
  });
});
