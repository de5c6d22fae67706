import { Token } from "aws-cdk-lib";
import type { OutboxWorkersStackProps } from "./stack-props.js";

const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/;

/**
 * An internet-facing ALB serves HTTPS or nothing: photos and their metadata never cross the internet
 * in plain text. A malformed ARN fails the synth here, not the deployment half-way.
 */
export function assertApiReachable(props: OutboxWorkersStackProps): void {
  const api = props.api;
  if (!api) return;
  if (api.internetFacing && api.certificateArn === undefined) {
    throw new Error(
      "api.internetFacing needs api.certificateArn (-c certificateArn=arn:aws:acm:<region>:<account>:certificate/<id>): an internet-facing ALB serves HTTPS only",
    );
  }
  if (api.certificateArn !== undefined && !Token.isUnresolved(api.certificateArn)) {
    if (!ACM_CERTIFICATE_ARN.test(api.certificateArn)) {
      throw new Error(
        `api.certificateArn ${JSON.stringify(api.certificateArn)} is not an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)`,
      );
    }
  }
  const network = props.existingNetwork;
  if (api.internetFacing && network && network.loadBalancerSubnetIds === undefined) {
    throw new Error(
      "api.internetFacing with existingNetwork needs loadBalancerSubnetIds (-c loadBalancerSubnetIds=…): public subnets for the ALB; the task subnets are private",
    );
  }
  const albSubnets = network ? (network.loadBalancerSubnetIds ?? network.taskSubnetIds) : undefined;
  if (albSubnets && albSubnets.length < 2) {
    throw new Error(
      `the photo service's ALB needs at least two subnets in different AZs; got ${albSubnets.join(", ") || "none"} (set loadBalancerSubnetIds, or give subnetIds two)`,
    );
  }
}
