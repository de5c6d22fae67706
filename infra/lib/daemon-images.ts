import { CfnParameter } from "aws-cdk-lib";
import * as ecr from "aws-cdk-lib/aws-ecr";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import type { Construct } from "constructs";

/**
 * Where the two images come from. Built by the repository's Dockerfile (targets `relay` and
 * `consumer`) and pushed by the user's CI: the stack never builds an image, so synthesis needs no
 * Docker and the template has no asset.
 *
 * - `registry` (the default, as deploy-time parameters): any registry the task can pull from
 *   without AWS credentials, or with a registry secret (`credentialsSecretArn`, e.g. a GHCR token).
 *   The execution role gets nothing but that secret — no wildcard anywhere.
 * - `ecr`: a private ECR repository. ECS must call ecr:GetAuthorizationToken, an action that exists
 *   only on resource `*`; this is the one wildcard the stack can contain, opt-in and documented.
 */
export type DaemonImagesProps =
  | {
      readonly kind: "registry";
      readonly relay: string;
      readonly consumer: string;
      readonly credentialsSecretArn?: string;
    }
  | {
      readonly kind: "ecr";
      readonly repositoryName: string;
      readonly relayTag: string;
      readonly consumerTag: string;
    };

export interface DaemonImages {
  readonly relay: ecs.ContainerImage;
  readonly consumer: ecs.ContainerImage;
}

export function daemonImages(scope: Construct, props: DaemonImagesProps | undefined): DaemonImages {
  if (props === undefined) {
    const relay = new CfnParameter(scope, "RelayImage", {
      type: "String",
      description: "Relay image URI (the Dockerfile's `relay` target), e.g. ghcr.io/acme/outbox-relay:1.2.3",
    });
    const consumer = new CfnParameter(scope, "ConsumerImage", {
      type: "String",
      description: "Consumer image URI (the Dockerfile's `consumer` target, with your handlers)",
    });
    return daemonImages(scope, {
      kind: "registry",
      relay: relay.valueAsString,
      consumer: consumer.valueAsString,
    });
  }
  if (props.kind === "ecr") {
    const repository = ecr.Repository.fromRepositoryName(scope, "ImageRepository", props.repositoryName);
    return {
      relay: ecs.ContainerImage.fromEcrRepository(repository, props.relayTag),
      consumer: ecs.ContainerImage.fromEcrRepository(repository, props.consumerTag),
    };
  }
  const credentials = props.credentialsSecretArn
    ? {
        credentials: secretsmanager.Secret.fromSecretCompleteArn(
          scope,
          "RegistryCredentials",
          props.credentialsSecretArn,
        ),
      }
    : {};
  return {
    relay: ecs.ContainerImage.fromRegistry(props.relay, credentials),
    consumer: ecs.ContainerImage.fromRegistry(props.consumer, credentials),
  };
}
