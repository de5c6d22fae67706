import type { AwsEndpoints } from "./local-stack.js";

/**
 * The environment variables that point an AWS SDK — and so our daemons — at the stack, as a task
 * definition would set them: region, credentials and the per-service endpoints.
 */
export function awsEnvironment(aws: AwsEndpoints): Record<string, string> {
  return {
    AWS_REGION: aws.region,
    AWS_ACCESS_KEY_ID: aws.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: aws.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_SNS: aws.snsEndpoint,
    AWS_ENDPOINT_URL_SQS: aws.sqsEndpoint,
    ...(aws.s3Endpoint === undefined ? {} : { AWS_ENDPOINT_URL_S3: aws.s3Endpoint }),
  };
}
