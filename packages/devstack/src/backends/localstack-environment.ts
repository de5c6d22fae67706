/**
 * The LocalStack container's environment: SNS, SQS and S3 (the claim check) only, plus the user's auth token when one
 * is set, so that the same code keeps working with a token-gated image (docker-compose.yml passes
 * the token the same way). An empty value is treated as unset.
 */
export function localstackEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const token = env.LOCALSTACK_AUTH_TOKEN;
  return { SERVICES: "sns,sqs,s3", ...(token ? { LOCALSTACK_AUTH_TOKEN: token } : {}) };
}
