import type { AwsEndpoints } from "./local-stack.js";
import { type SnsEmulator, type SnsEmulatorOptions, startSnsEmulator } from "./sns/server.js";
import { type RunningSqs, startEmbeddedSqs } from "./sqs/embedded.js";

const REGION = "us-east-1";
// LocalStack's account id, so ARNs look the same on both backends.
const ACCOUNT_ID = "000000000000";
const CREDENTIALS = { accessKeyId: "test", secretAccessKey: "test" };

export type LocalAwsOptions = Omit<
  SnsEmulatorOptions,
  "sqsEndpoint" | "region" | "accountId" | "credentials"
>;

/** Embedded SQS and the SNS emulator delivering into it, on 127.0.0.1. */
export interface LocalAws {
  readonly aws: AwsEndpoints;
  readonly sns: SnsEmulator;
  readonly sqs: RunningSqs;
  /** SNS first: its fan-out writes into SQS. */
  stop(): Promise<void>;
}

/**
 * The AWS half of the embedded stack, without Postgres: what the embedded backend runs, and what a
 * benchmark or a test needing an emulator of its own (to reset or fault it globally) starts.
 */
export async function startLocalAws(options: LocalAwsOptions = {}): Promise<LocalAws> {
  const sqs = await startEmbeddedSqs({ region: REGION, accountId: ACCOUNT_ID });
  let sns: SnsEmulator;
  try {
    sns = await startSnsEmulator({
      ...options,
      sqsEndpoint: sqs.endpoint,
      region: REGION,
      accountId: ACCOUNT_ID,
      credentials: CREDENTIALS,
    });
  } catch (error) {
    await sqs.stop();
    throw error;
  }
  return {
    aws: { region: REGION, snsEndpoint: sns.endpoint, sqsEndpoint: sqs.endpoint, credentials: CREDENTIALS },
    sns,
    sqs,
    stop: async () => {
      try {
        await sns.stop();
      } finally {
        await sqs.stop();
      }
    },
  };
}
