import { SNSClient, type SNSClientConfig } from "@aws-sdk/client-sns";
import { SQSClient, type SQSClientConfig } from "@aws-sdk/client-sqs";
import type { AwsEndpoints } from "./stack.js";

type Extra<T> = Omit<T, "endpoint" | "region" | "credentials">;

/** A real SNS client pointed at the stack; `config` adds e.g. `maxAttempts` or a request timeout. */
export function snsClient(aws: AwsEndpoints, config: Extra<SNSClientConfig> = {}): SNSClient {
  return new SNSClient({
    ...config,
    endpoint: aws.snsEndpoint,
    region: aws.region,
    credentials: aws.credentials,
  });
}

export function sqsClient(aws: AwsEndpoints, config: Extra<SQSClientConfig> = {}): SQSClient {
  return new SQSClient({
    ...config,
    endpoint: aws.sqsEndpoint,
    region: aws.region,
    credentials: aws.credentials,
  });
}
