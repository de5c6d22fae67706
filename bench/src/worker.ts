/**
 * Child-process entry of `pnpm bench`: runs one job (the first line on stdin) and reports on stdout.
 * Everything measured here — CPU, peak RSS — is the subject's alone. The subjects themselves are
 * in subjects/, one file each.
 */
import { CONSUMER_PLAN_CACHE_MODE } from "@outbox/consumer";
import { createDatabase, createSnsClient, createSqsClient, EXIT_CRASH, EXIT_OK } from "@outbox/shared";
import { childControl, emit } from "./child.js";
import type { ConsumerJob, Job, RelayJob } from "./jobs.js";
import { bareSdkConsumer } from "./subjects/bare-sdk-consumer.js";
import { bareSdkRelay } from "./subjects/bare-sdk-relay.js";
import { awsSettings, Counter, measure } from "./subjects/measure-subject.js";
import { ourConsumer } from "./subjects/our-consumer.js";
import { ourRelay } from "./subjects/our-relay.js";
import { ptoRelay } from "./subjects/pto-relay.js";
import { sqsConsumer } from "./subjects/sqs-consumer.js";

const control = childControl();
const job = (await control.job) as Job;
process.env.AWS_ACCESS_KEY_ID = job.aws.credentials.accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = job.aws.credentials.secretAccessKey;

async function runRelay(job: RelayJob): Promise<void> {
  const counter = new Counter(job.expected, control.finish);
  const times = new Map<string, number>();
  const claimMs: number[] = [];
  const sns = createSnsClient(awsSettings(job.aws.region, job.aws.snsEndpoint, 64));
  const subject =
    job.impl === "ours"
      ? await ourRelay(job, sns, counter, times, claimMs)
      : job.impl === "bare-sdk"
        ? bareSdkRelay(job, sns, counter)
        : ptoRelay(job, sns, counter, times);
  await measure(
    control,
    counter,
    job.capMs,
    subject,
    () => ({
      times: job.recordTimes ? [...times] : undefined,
      claimMs: job.timeClaims ? claimMs : undefined,
    }),
    `relay-${job.impl}-${job.sink}`,
  );
  sns.destroy();
}

async function runConsumer(job: ConsumerJob): Promise<void> {
  const counter = new Counter(job.expected, control.finish);
  const sqs = createSqsClient(
    awsSettings(job.aws.region, job.aws.sqsEndpoint, job.pollers + job.concurrency + 8),
  );
  const database = createDatabase({
    url: job.url,
    service: "bench-consumer",
    poolMax: job.concurrency + 2,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
    // As the consumer daemon plans, for both sides alike.
    planCacheMode: CONSUMER_PLAN_CACHE_MODE,
  });
  await Promise.all(
    Array.from({ length: Math.min(job.concurrency, 20) }, () => database.pool.query("SELECT 1")),
  );
  const subject =
    job.impl === "ours" || job.impl === "ours-batch"
      ? ourConsumer(job, database, sqs, counter)
      : job.impl === "bare-sdk"
        ? { ...bareSdkConsumer(job, sqs, counter), duplicates: () => 0 }
        : sqsConsumer(job, database, sqs, counter);
  await measure(
    control,
    counter,
    job.capMs,
    subject,
    () => ({ duplicates: subject.duplicates() }),
    `consumer-${job.impl}-c${job.concurrency}`,
  );
  sqs.destroy();
  await database.close(2_000).catch(() => {});
}

try {
  if (job.kind === "relay") await runRelay(job);
  else await runConsumer(job);
  process.exit(EXIT_OK);
} catch (error) {
  await emit({ t: "log", msg: `job failed: ${(error as Error).stack ?? String(error)}` });
  process.exit(EXIT_CRASH);
}
