import type { CfnElement } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import type { OutboxWorkersStack } from "../lib/outbox-workers-stack.js";
import { stringsIn, synth } from "./support/synth.js";

const ecrImages = {
  kind: "ecr",
  repositoryName: "outbox",
  relayTag: "relay-1",
  consumerTag: "consumer-1",
} as const;

/** The short service name of each interface endpoint (`sns`, `ecr.api`, …), with its properties. */
function interfaceEndpoints(template: Template): Map<string, Record<string, unknown>> {
  const endpoints = Object.values(
    template.findResources("AWS::EC2::VPCEndpoint", { Properties: { VpcEndpointType: "Interface" } }),
  );
  return new Map(
    endpoints.map((endpoint) => {
      // ServiceName is com.amazonaws.<region>.<name>, the region a token: the name is the last piece.
      const name = stringsIn(endpoint.Properties.ServiceName).at(-1)?.replace(/^\./, "") ?? "";
      return [name, endpoint.Properties];
    }),
  );
}

function taskSubnetRefs(stack: OutboxWorkersStack): { Ref: string }[] {
  const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const vpc = stack.relay.service.cluster.vpc;
  return [...vpc.privateSubnets, ...vpc.isolatedSubnets].map((subnet) => ({ Ref: id(subnet) }));
}

describe("the stack's VPC", () => {
  const { stack, template } = synth();

  it("reaches SNS, SQS, Secrets Manager and CloudWatch Logs through endpoints in the task subnets", () => {
    const endpoints = interfaceEndpoints(template);
    expect([...endpoints.keys()].sort()).toEqual(["logs", "secretsmanager", "sns", "sqs"]);
    for (const endpoint of endpoints.values()) {
      expect(endpoint).toMatchObject({ PrivateDnsEnabled: true, SubnetIds: taskSubnetRefs(stack) });
    }
    template.hasResourceProperties("AWS::EC2::VPCEndpoint", {
      VpcEndpointType: "Gateway",
      ServiceName: { "Fn::Join": ["", ["com.amazonaws.", { Ref: "AWS::Region" }, ".s3"]] },
    });
  });

  it("keeps one NAT gateway for what is outside AWS: registry images and the collector's public image", () => {
    template.resourceCountIs("AWS::EC2::NatGateway", 1);
  });

  it("adds ECR's endpoints when the images come from ECR (their layers come through the S3 gateway)", () => {
    const endpoints = interfaceEndpoints(synth({ images: ecrImages }).template);
    expect([...endpoints.keys()].sort()).toEqual([
      "ecr.api",
      "ecr.dkr",
      "logs",
      "secretsmanager",
      "sns",
      "sqs",
    ]);
  });
});

describe("without a NAT gateway", () => {
  it("is refused while a task pulls something no endpoint serves", () => {
    expect(() => synth({ natGateways: 0 })).toThrow(
      /natGateways 0: the images are pulled from a registry outside AWS/,
    );
    expect(() => synth({ natGateways: 0, images: ecrImages })).toThrow(
      /public\.ecr\.aws, which has no VPC endpoint/,
    );
    // The relay's metrics off still leaves the other collectors (and the relay's, for its traces).
    expect(() => synth({ natGateways: 0, images: ecrImages, relay: { lagMetric: false } })).toThrow(
      /public\.ecr\.aws, which has no VPC endpoint/,
    );
  });

  it("runs the tasks in isolated subnets once everything is in ECR", () => {
    const collectorImage = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/outbox:collector-0.43.3";
    for (const telemetry of [
      { telemetry: { metrics: false, traces: false } },
      { telemetry: { collectorImage } },
      // The image's name from before `telemetry`: now every sidecar's.
      { relay: { collectorImage } },
    ]) {
      const { stack, template } = synth({ natGateways: 0, images: ecrImages, ...telemetry });
      template.resourceCountIs("AWS::EC2::NatGateway", 0);
      const vpc = stack.relay.service.cluster.vpc;
      expect(vpc.privateSubnets).toEqual([]);
      expect(vpc.isolatedSubnets).toHaveLength(2);
      const network = Object.values(template.findResources("AWS::ECS::Service")).map(
        (service) => service.Properties.NetworkConfiguration.AwsvpcConfiguration.Subnets,
      );
      for (const subnets of network) expect(subnets).toEqual(taskSubnetRefs(stack));
      expect(interfaceEndpoints(template).get("ecr.dkr")).toMatchObject({ SubnetIds: taskSubnetRefs(stack) });
    }
  });

  it("reaches X-Ray through an endpoint of its own while the collectors send traces", () => {
    const collectorImage = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/outbox:collector-0.43.3";
    const isolated = { natGateways: 0, images: ecrImages } as const;
    const tracing = synth({ ...isolated, telemetry: { collectorImage } });
    expect(interfaceEndpoints(tracing.template).get("xray")).toMatchObject({
      PrivateDnsEnabled: true,
      SubnetIds: taskSubnetRefs(tracing.stack),
    });
    const metricsOnly = synth({ ...isolated, telemetry: { collectorImage, traces: false } }).template;
    expect(interfaceEndpoints(metricsOnly).has("xray")).toBe(false);
    // With a NAT gateway the spans take it: no endpoint billed by the hour for them.
    expect(interfaceEndpoints(synth().template).has("xray")).toBe(false);
  });

  it("is a setting of the stack's own VPC only", () => {
    const { stack } = synth();
    expect(() => synth({ vpc: stack.relay.service.cluster.vpc, natGateways: 0 })).toThrow(
      /natGateways shapes the stack's own VPC/,
    );
  });
});
