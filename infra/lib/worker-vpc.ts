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
}

export interface WorkerVpc {
  readonly vpc: ec2.Vpc;
  readonly taskSubnets: ec2.SubnetSelection;
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
  ];
  for (const service of services) {
    // Private DNS: the SDK's default endpoint names resolve to the endpoint, nothing to configure.
    vpc.addInterfaceEndpoint(service.shortName, { service, subnets: taskSubnets, privateDnsEnabled: true });
  }
  // Free, and where ECR keeps image layers.
  vpc.addGatewayEndpoint("S3", { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [taskSubnets] });
  return { vpc, taskSubnets };
}
