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

export function sqsClient(aws: AwsEndpoints, config: Extra<SQSClientConfig> = {}): SQSClient {
  return new SQSClient(pointedAt(aws, aws.sqsEndpoint, config));
}
