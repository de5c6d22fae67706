import { Fn } from "aws-cdk-lib";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import type { Construct } from "constructs";

export interface WorkerVpcProps {
  /**
   * NAT gateways for what is outside AWS: images on registries other than private ECR (the
   * parameters' default, and the collector's public.ecr.aws image, which has no VPC endpoint), and
   * HTTP services such as the photo service's equipment service. 0 makes the task subnets isolated.
   */
  readonly natGateways: number;
  /** The images come from private ECR: add its two endpoints (the layers come from S3). */
  readonly ecrImages: boolean;
  /** The collectors send traces and have no NAT gateway to reach X-Ray through: add its endpoint. */
  readonly xrayEndpoint: boolean;
}

export interface WorkerVpc {
  readonly vpc: ec2.IVpc;
  readonly taskSubnets: ec2.SubnetSelection;
  /** Where the photo service's ALB goes; unset: CDK's choice (private if internal, public if not). */
  readonly loadBalancerSubnets?: ec2.SubnetSelection;
}

/** An existing VPC, named by ids (`-c vpcId=… -c subnetIds=…`): nothing is looked up, the synth stays offline. */
export interface ExistingNetworkProps {
  readonly vpcId: string;
  /**
   * The tasks' subnets. They must reach SNS, SQS, Secrets Manager, CloudWatch Logs, the image
   * registry and the database (endpoints or a NAT route; the stack adds nothing to a VPC it did not create).
   */
  readonly taskSubnetIds: readonly string[];
  /**
   * The photo service's ALB: at least two subnets in different AZs, public ones for an
   * internet-facing ALB. Default: the task subnets (an internal ALB).
   */
  readonly loadBalancerSubnetIds?: readonly string[];
}

const AWS_ID = { vpc: /^vpc-[0-9a-f]{8,17}$/, subnet: /^subnet-[0-9a-f]{8,17}$/ };

/** Each id malformed in `props`, as `name: why`; empty when all are well-formed. */
export function existingNetworkProblems(props: ExistingNetworkProps): string[] {
  const problems: string[] = [];
  if (!AWS_ID.vpc.test(props.vpcId))
    problems.push(`vpcId ${JSON.stringify(props.vpcId)} is not a VPC id (vpc-…)`);
  if (props.taskSubnetIds.length === 0)
    problems.push("subnetIds names no subnet: the tasks need at least one");
  const lists = { subnetIds: props.taskSubnetIds, loadBalancerSubnetIds: props.loadBalancerSubnetIds ?? [] };
  for (const [name, ids] of Object.entries(lists)) {
    const bad = ids.filter((id) => !AWS_ID.subnet.test(id));
    if (bad.length > 0)
      problems.push(
        `${name}: ${bad.join(", ")} ${bad.length === 1 ? "is not a subnet id" : "are not subnet ids"} (subnet-…)`,
      );
  }
  return problems;
}

/**
 * The VPC and subnets an account already has (the database's, typically), imported by id:
 * `Vpc.fromVpcAttributes` and `Subnet.fromSubnetId` need no lookup, so the synth stays offline and
 * the template names exactly the subnets given. No endpoint is added (see ExistingNetworkProps).
 */
export function existingNetwork(scope: Construct, props: ExistingNetworkProps): WorkerVpc {
  const problems = existingNetworkProblems(props);
  if (problems.length > 0) throw new Error(problems.join("; "));
  // The AZs stay a token (Fn::GetAZs, never a context lookup): the subnets are selected by id, not by AZ.
  const vpc = ec2.Vpc.fromVpcAttributes(scope, "Vpc", { vpcId: props.vpcId, availabilityZones: Fn.getAzs() });
  // One import per id: the task and ALB subnets may be the same.
  const imported = new Map<string, ec2.ISubnet>();
  const subnet = (id: string): ec2.ISubnet => {
    const known = imported.get(id) ?? ec2.Subnet.fromSubnetId(scope, `Subnet-${id}`, id);
    imported.set(id, known);
    return known;
  };
  const subnets = (ids: readonly string[]) => ({ subnets: ids.map(subnet) });
  return {
    vpc,
    taskSubnets: subnets(props.taskSubnetIds),
    loadBalancerSubnets: subnets(props.loadBalancerSubnetIds ?? props.taskSubnetIds),
  };
}

/**
 * The network the tasks run in: two AZs, public subnets (for an internet-facing ALB and the NAT
 * gateways) and the tasks' private subnets, with VPC endpoints for every AWS API the tasks call. The
 * data path (SNS, SQS), the database secret and the logs therefore never cross a NAT gateway: a NAT
 * outage can delay pulling an image for a new task, never the work of a running one.
 *
 * A function, not a construct: the VPC keeps its place in the tree (`Vpc` at the stack's root), so
 * its logical ids, and with them every subnet and service, survive an update of an existing stack.
 */
export function workerVpc(scope: Construct, props: WorkerVpcProps): WorkerVpc {
  const taskSubnetType =
    props.natGateways > 0 ? ec2.SubnetType.PRIVATE_WITH_EGRESS : ec2.SubnetType.PRIVATE_ISOLATED;
  const vpc = new ec2.Vpc(scope, "Vpc", {
    maxAzs: 2,
    natGateways: props.natGateways,
    subnetConfiguration: [
      { name: "public", subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
      { name: "private", subnetType: taskSubnetType, cidrMask: 22 },
    ],
  });
  const taskSubnets = { subnetType: taskSubnetType };

  const services = [
    ec2.InterfaceVpcEndpointAwsService.SNS, // the relay's PublishBatch
    ec2.InterfaceVpcEndpointAwsService.SQS, // the consumer's receive, delete, visibility, DLQ
    ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER, // DATABASE_URL, fetched when a task starts
    ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS, // awslogs and the collector's EMF events
    ...(props.ecrImages
      ? [ec2.InterfaceVpcEndpointAwsService.ECR, ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER]
      : []),
    ...(props.xrayEndpoint ? [ec2.InterfaceVpcEndpointAwsService.XRAY] : []),
  ];
  for (const service of services) {
    // Private DNS: the SDK's default endpoint names resolve to the endpoint, nothing to configure.
    vpc.addInterfaceEndpoint(service.shortName, { service, subnets: taskSubnets, privateDnsEnabled: true });
  }
  // Free, and where ECR keeps image layers.
  vpc.addGatewayEndpoint("S3", { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [taskSubnets] });
  return { vpc, taskSubnets };
}
