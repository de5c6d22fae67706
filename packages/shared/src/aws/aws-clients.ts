import http from "node:http";
import https from "node:https";
import { S3Client } from "@aws-sdk/client-s3";
import { SNSClient } from "@aws-sdk/client-sns";
import { SQSClient } from "@aws-sdk/client-sqs";
import { traceAwsCalls } from "../telemetry/aws-call-spans.js";

export interface AwsClientSettings {
  readonly region: string;
  /** Empty means the AWS endpoint for the region. */
  readonly endpoint: string;
  readonly connectionTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly maxAttempts: number;
  /** Sockets kept per host: at least the number of requests the daemon keeps in flight. */
  readonly maxSockets?: number;
}

function clientConfig(settings: AwsClientSettings) {
  const agentOptions = { keepAlive: true, maxSockets: settings.maxSockets ?? 50 };
  return {
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    maxAttempts: settings.maxAttempts,
    requestHandler: {
      connectionTimeout: settings.connectionTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // Without this the SDK only logs a warning when requestTimeout passes and keeps waiting.
      throwOnRequestTimeout: true,
      httpAgent: new http.Agent(agentOptions),
      httpsAgent: new https.Agent(agentOptions),
    },
  };
}

/**
 * SNS client with explicit timeouts and bounded retries. Each call must still be cancellable by the
 * caller's deadline: the relay's publisher hands its signal to the HTTP handler without per-call
 * options, so `cacheMiddleware` composes the middleware stack once per command class instead of on
 * every call (a twentieth of a PublishBatch's CPU); a call sent with options builds its own as before.
 */
export function createSnsClient(settings: AwsClientSettings): SNSClient {
  return traceAwsCalls(new SNSClient({ ...clientConfig(settings), cacheMiddleware: true }));
}

/**
 * SQS client, configured like `createSnsClient`, plus two savings a consumer pays on every call:
 *  - `cacheMiddleware`: the SDK composes the middleware stack once per command class instead of on
 *    every call (a fifth or more of a call's CPU). It applies only to calls sent without per-call
 *    options (`send(command)`); nothing here changes the middleware stack after the first call.
 *  - `md5: false`: no MD5 of every body received or sent. It duplicates what TLS already checks in
 *    transit, and the inbox, not the body's hash, is what makes a redelivery harmless.
 */
export function createSqsClient(settings: AwsClientSettings): SQSClient {
  return traceAwsCalls(new SQSClient({ ...clientConfig(settings), cacheMiddleware: true, md5: false }));
}

/**
 * `createSqsClient` for a consumer's long polls: a poll is silent for up to `waitTimeSeconds`, so the
 * client's own request timeout covers the wait on top of the usual one. Receives then go out without
 * per-call options, which `cacheMiddleware` needs (ConsumerOptions.receiveSqs).
 */
export function createLongPollSqsClient(settings: AwsClientSettings, waitTimeSeconds: number): SQSClient {
  return createSqsClient({
    ...settings,
    requestTimeoutMs: waitTimeSeconds * 1_000 + settings.requestTimeoutMs,
  });
}

/**
 * S3 client, configured like `createSnsClient`. An endpoint override (LocalStack, moto) gets
 * path-style addressing: a local endpoint has no per-bucket host names.
 */
export function createS3Client(settings: AwsClientSettings): S3Client {
  return new S3Client({ ...clientConfig(settings), forcePathStyle: settings.endpoint !== "" });
}

/** The endpoint a service uses: its own override, else the shared one, else AWS. */
export function endpointFor(serviceOverride: string, sharedOverride: string): string {
  return serviceOverride || sharedOverride;
}
