import type { SNSClient, SNSClientConfig } from "@aws-sdk/client-sns";
import type { SQSClient, SQSClientConfig } from "@aws-sdk/client-sqs";
import { type FaultClient, faultClientFor, type StackInfo, snsClient, sqsClient } from "@outbox/devstack";
import { inject } from "vitest";

export function stack(): StackInfo {
  return inject("stack");
}

export interface AwsClientOptions {
  sns?: Omit<SNSClientConfig, "endpoint" | "region" | "credentials">;
  sqs?: Omit<SQSClientConfig, "endpoint" | "region" | "credentials">;
}

/** Real SDK clients for the run's stack; destroy them in afterAll. */
export function awsClients(options: AwsClientOptions = {}): { sns: SNSClient; sqs: SQSClient } {
  const { aws } = stack();
  return { sns: snsClient(aws, options.sns), sqs: sqsClient(aws, options.sqs) };
}

/** The run's fault control, or null on backends without fault injection. */
export function faultClient(): FaultClient | null {
  return faultClientFor(stack());
}

// What test/global-setup.ts provides to every test file.
declare module "vitest" {
  export interface ProvidedContext {
    stack: StackInfo;
    postgresAdminUrl: string;
    /** A folder of the run's own (workspace-build.ts), removed when the run ends. */
    runFolder: string;
  }
}
