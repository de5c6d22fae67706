import type { SQSClient } from "@aws-sdk/client-sqs";
import {
  ConfigError,
  createLogger,
  createS3Client,
  createSqsClient,
  endpointFor,
  type Logger,
  packageVersion,
  readConfig,
  reportConfigErrors,
  type S3Client,
} from "@outbox/shared";
import {
  DLQ_HOLD_SECONDS,
  type DlqCommandConfig,
  dlqCommandProblems,
  dlqCommandSettings,
} from "../settings.js";

/**
 * What `consumer dlq list` and `consumer redrive` read: SQS and the two queues, nothing else, so
 * that an operator can run them without the daemon's whole environment. Their `--help` lists these.
 */
export const commandSettings = dlqCommandSettings;

/** The consumer's queue and its DLQ, for a one-shot command. */
export interface DlqQueues {
  readonly sqs: SQSClient;
  /** Where a claim-checked dead letter's object is looked for before a redrive sends it back. */
  readonly s3: S3Client;
  /** CONSUMER_QUEUE_URL: where a redriven message goes back to. */
  readonly queueUrl: string;
  /** CONSUMER_DLQ_URL. */
  readonly dlqUrl: string;
  /** AWS_REQUEST_TIMEOUT_MS: a socket's inactivity limit, which a long poll's wait adds to. */
  readonly requestTimeoutMs: number;
  /** The longest one SQS call may take, every SDK attempt included: each call's deadline. */
  readonly callTimeoutMs: number;
  /** How long a received dead letter stays invisible unless released: DLQ_HOLD_SECONDS. */
  readonly holdSeconds: number;
  /** Progress and warnings on stderr; stdout carries the command's answer alone. */
  readonly log: Logger;
  close(): void;
}

/** The queues for a one-shot command; bad config: one line per problem on stderr, null. */
export function openQueues(command: string): DlqQueues | null {
  const program = `consumer ${command}`;
  const config = reportConfigErrors(program, (): DlqCommandConfig => {
    const read = readConfig(commandSettings, process.env);
    const problems = [...read.problems, ...dlqCommandProblems(read.config)];
    if (problems.length > 0) throw new ConfigError(problems);
    return read.config;
  });
  if (config === undefined) return null;
  const log = createLogger({
    service: `consumer-${command.replace(" ", "-")}`,
    version: packageVersion(import.meta.url),
    level: config.logLevel,
    destination: process.stderr,
  });
  return queuesFor(config, log);
}

/** The queues a configuration names, with SDK clients of its own: close() destroys them. */
export function queuesFor(config: DlqCommandConfig, log: Logger): DlqQueues {
  const awsClientSettings = {
    region: config.awsRegion,
    endpoint: endpointFor(config.awsEndpointUrlSqs, config.awsEndpointUrl),
    connectionTimeoutMs: config.awsConnectionTimeoutMs,
    requestTimeoutMs: config.awsRequestTimeoutMs,
    maxAttempts: config.awsMaxAttempts,
  };
  const sqs = createSqsClient(awsClientSettings);
  // Only claim-checked dead letters use it: no request is made for any other.
  const s3 = createS3Client({
    ...awsClientSettings,
    endpoint: endpointFor(config.awsEndpointUrlS3, config.awsEndpointUrl),
  });
  return {
    sqs,
    s3,
    queueUrl: config.queueUrl,
    dlqUrl: config.dlqUrl,
    requestTimeoutMs: config.awsRequestTimeoutMs,
    callTimeoutMs: config.awsRequestTimeoutMs * config.awsMaxAttempts,
    holdSeconds: DLQ_HOLD_SECONDS,
    log,
    close: () => {
      sqs.destroy();
      s3.destroy();
    },
  };
}
