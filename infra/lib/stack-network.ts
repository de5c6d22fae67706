import * as ec2 from "aws-cdk-lib/aws-ec2";
import type { Construct } from "constructs";
import { pullsPublicCollector } from "./daemon-telemetry.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";
import { existingNetwork, type WorkerVpc, workerVpc } from "./worker-vpc.js";

/**
 * Why the stack's VPC cannot go without a NAT gateway, if it cannot: something a task pulls has no
 * VPC endpoint.
 */
function needsNat(props: OutboxWorkersStackProps): string | undefined {
  if (props.images?.kind !== "ecr") {
    return 'the images are pulled from a registry outside AWS: push them to ECR (images.kind "ecr")';
  }
  if (pullsPublicCollector(props)) {
    return "the collector's default image is on public.ecr.aws, which has no VPC endpoint: push it to your ECR repository and set telemetry.collectorImage, or set telemetry's metrics and traces to false";
  }
  return undefined;
}

/** The stack's own VPC, or the one given (`vpc`, or `existingNetwork` by ids). */
export function stackNetwork(scope: Construct, props: OutboxWorkersStackProps): WorkerVpc {
  const given = [props.vpc && "vpc", props.existingNetwork && "existingNetwork"].filter(Boolean);
  if (given.length > 1) throw new Error("vpc and existingNetwork both name the network: give one");
  if (given.length === 1 && props.natGateways !== undefined) {
    throw new Error(`natGateways shapes the stack's own VPC; with \`${given[0]}\` the network is yours`);
  }
  if (props.existingNetwork) return existingNetwork(scope, props.existingNetwork);
  if (props.vpc) return { vpc: props.vpc, taskSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } };
  const natGateways = props.natGateways ?? 1;
  const withoutNat = natGateways === 0 ? needsNat(props) : undefined;
  if (withoutNat) throw new Error(`natGateways 0: ${withoutNat}`);
  return workerVpc(scope, {
    natGateways,
    ecrImages: props.images?.kind === "ecr",
    // With a NAT gateway the spans take it: they are not the work, and an endpoint is billed by the hour.
    xrayEndpoint: natGateways === 0 && (props.telemetry?.traces ?? true),
  });
}
