import { S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { SNSClient, type SNSClientConfig } from "@aws-sdk/client-sns";
import { SQSClient, type SQSClientConfig } from "@aws-sdk/client-sqs";
import type { AwsEndpoints } from "./local-stack.js";

type Extra<T> = Omit<T, "endpoint" | "region" | "credentials">;

/** `config` plus where the stack is; the stack's endpoint, region and credentials always win. */
function pointedAt<T>(aws: AwsEndpoints, endpoint: string, config: T) {
  return { ...config, endpoint, region: aws.region, credentials: aws.credentials };
}

/** A real SNS client pointed at the stack; `config` adds e.g. `maxAttempts` or a request timeout. */
export function snsClient(aws: AwsEndpoints, config: Extra<SNSClientConfig> = {}): SNSClient {
  return new SNSClient(pointedAt(aws, aws.snsEndpoint, config));
}

/** A real S3 client pointed at the stack's S3, path-style (a local endpoint has no bucket subdomains). */
export function s3Client(aws: AwsEndpoints, config: Extra<S3ClientConfig> = {}): S3Client {
  if (aws.s3Endpoint === undefined)
    throw new Error("this stack has no S3 (startLocalAws runs SNS and SQS only)");
  return new S3Client({ ...pointedAt(aws, aws.s3Endpoint, config), forcePathStyle: true });
}

export function sqsClient(aws: AwsEndpoints, config: Extra<SQSClientConfig> = {}): SQSClient {
  return new SQSClient(pointedAt(aws, aws.sqsEndpoint, config));
}
