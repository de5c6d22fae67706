/**
 * Child-process entry of `pnpm bench`: runs one job (env BENCH_JOB) and reports on stdout.
 * Everything measured here — CPU, peak RSS — is the subject's alone.
 */
import { performance } from "node:perf_hooks";
import { PublishCommand } from "@aws-sdk/client-sns";
import type { Message } from "@aws-sdk/client-sqs";
import { createConsumer, defineHandlers } from "@outbox/consumer";
import { createRelay, createSnsPublisher, nullPublisher, type Publisher } from "@outbox/relay";
import {
  createDatabase,
  createLogger,
  createSnsClient,
  createSqsClient,
  EVENT_ID_ATTRIBUTE,
  EVENT_TYPE_ATTRIBUTE,
  EXIT_CRASH,
  EXIT_OK,
} from "@outbox/shared";
import type pg from "pg";
import {
  createReplicationFullConcurrencyController,
  type GeneralMessageHandler,
  getDisabledLogger,
  initializePollingMessageListener,
  initializeReplicationMessageListener,
  type TransactionalMessage,
} from "pg-transactional-outbox";
import { Consumer as SqsConsumer } from "sqs-consumer";
import { childControl, emit } from "./child.js";
import { PTO_NEXT_FUNCTION, PTO_TABLE } from "./fixtures.js";
import type { ConsumerJob, Job, RelayJob } from "./jobs.js";
import { wallMs } from "./measure.js";

const control = childControl();
const job = JSON.parse(process.env.BENCH_JOB ?? "{}") as Job;
process.env.AWS_ACCESS_KEY_ID = job.aws.credentials.accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = job.aws.credentials.secretAccessKey;

/** Counts distinct items, reports progress every 20 ms and notices when the target is reached. */
class Counter {
  readonly seen = new Set<string>();
  count = 0;
  reachedAt: number | undefined;
  readonly #reached: Promise<void>;
  #resolve: () => void = () => {};

  constructor(readonly expected: number | null) {
    this.#reached = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    let reported = -1;
    setInterval(() => {
      if (this.count !== reported) {
        reported = this.count;
        void emit({ t: "progress", n: this.count });
      }
    }, 20).unref();
  }

  add(n = 1): void {
    this.count += n;
    if (this.expected !== null && this.count >= this.expected && this.reachedAt === undefined) {
      this.reachedAt = performance.now();
      this.#resolve();
    }
  }

  addId(id: string): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.add();
  }

  /** Resolves at the target, at `finish`, or after `capMs`; says which. */
  async done(capMs: number): Promise<"reached" | "finish" | "cap"> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<"cap">((resolve) => {
      timer = setTimeout(() => resolve("cap"), capMs);
    });
    try {
      return await Promise.race([
        this.#reached.then(() => "reached" as const),
        control.finish.then(() => "finish" as const),
        cap,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function maxRssMiB(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/**
 * The measured part of a job: tells the parent it is ready, waits for its go, runs the subject until
 * the counter's target (or `capMs`, or the parent's finish), then stops it (10 s at most). `extra`
 * adds the job's own figures, taken before the stop.
 */
async function measure<Extra extends object>(
  counter: Counter,
  capMs: number,
  subject: { start: () => void; stop: () => Promise<void> },
  extra: () => Extra,
) {
  await emit({ t: "ready" });
  await control.go;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  subject.start();
  const how = await counter.done(capMs);
  const ended = counter.reachedAt ?? performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const result = {
    count: counter.count,
    seconds: (ended - started) / 1_000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    maxRssMiB: maxRssMiB(),
    capped: how === "cap",
    ...extra(),
  };
  await Promise.race([subject.stop(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  return result;
}

// ---- relays ----

/** The daemons' own AWS clients (keep-alive agents, bounded retries), for us and the peers alike. */
function awsSettings(endpoint: string, maxSockets: number) {
  return {
    region: job.aws.region,
    endpoint,
    connectionTimeoutMs: 3_000,
    requestTimeoutMs: 5_000,
    maxAttempts: 3,
    maxSockets,
  };
}

async function runRelay(job: RelayJob): Promise<void> {
  const counter = new Counter(job.expected);
  const times = new Map<string, number>();
  const sns = createSnsClient(awsSettings(job.aws.snsEndpoint, 64));
  let stop: () => Promise<void>;
  let start: () => void;

  if (job.impl === "ours") {
    const handle = createDatabase({
      url: job.url,
      service: "bench-relay",
      poolMax: job.poolMax,
      statementTimeoutMs: 30_000,
      idleInTransactionTimeoutMs: 30_000,
    });
    const inner = job.sink === "null" ? nullPublisher : createSnsPublisher(sns);
    const publisher: Publisher = {
      async publishBatch(request, signal) {
        const result = await inner.publishBatch(request, signal);
        if (job.recordTimes) {
          const at = wallMs();
          for (const entry of request.entries) times.set(entry.id, at);
        }
        return result;
      },
    };
    let relay: ReturnType<typeof createRelay> | undefined;
    start = () => {
      relay = createRelay({
        db: handle.db,
        publisher,
        listenUrl: job.listen ? job.url : null,
        topicArns: { bench: job.topicArn },
        batchSize: job.batchSize,
        publishConcurrency: 16,
        pollIntervalMs: job.pollIntervalMs,
      });
      relay.on("batch", (report) => counter.add(report.published));
    };
    // Warm the pool so connection set-up is not measured.
    await Promise.all(Array.from({ length: Math.min(4, job.poolMax) }, () => handle.pool.query("SELECT 1")));
    stop = async () => {
      await relay?.drain();
      await handle.close(5_000);
    };
  } else {
    // pg-transactional-outbox, wired as its README's outbox example: a GeneralMessageHandler that
    // publishes each message, outbox-style settings (no max-attempts / poisonous protection).
    const handler: GeneralMessageHandler = {
      handle: async (message: TransactionalMessage) => {
        if (job.sink === "sns") {
          await sns.send(
            new PublishCommand({
              TopicArn: job.topicArn,
              Message: JSON.stringify(message.payload),
              MessageAttributes: {
                [EVENT_ID_ATTRIBUTE]: { DataType: "String", StringValue: message.id },
                [EVENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: message.messageType },
              },
            }),
          );
        }
        if (job.recordTimes) times.set(message.id, wallMs());
        counter.addId(message.id);
      },
    };
    const dbConfig: pg.PoolConfig = { connectionString: job.url, max: job.poolMax };
    const baseSettings = {
      dbSchema: "public",
      dbTable: PTO_TABLE,
      enableMaxAttemptsProtection: false,
      enablePoisonousMessageProtection: false,
      messageCleanupIntervalInMs: 0,
    };
    const logger = getDisabledLogger();
    let shutdown: (() => Promise<void>) | undefined;
    start = () => {
      if (job.impl === "pto-polling") {
        [shutdown] = initializePollingMessageListener(
          {
            outboxOrInbox: "outbox",
            dbListenerConfig: { connectionString: job.url },
            dbHandlerConfig: dbConfig,
            settings: {
              ...baseSettings,
              nextMessagesBatchSize: job.batchSize,
              nextMessagesFunctionName: PTO_NEXT_FUNCTION,
              nextMessagesPollingIntervalInMs: job.pollIntervalMs,
            },
          },
          handler,
          logger,
        );
      } else {
        if (!job.pto) throw new Error("pto-replication needs the publication and slot names");
        [shutdown] = initializeReplicationMessageListener(
          {
            outboxOrInbox: "outbox",
            dbListenerConfig: { connectionString: job.url },
            dbHandlerConfig: dbConfig,
            settings: {
              ...baseSettings,
              dbPublication: job.pto.publication,
              dbReplicationSlot: job.pto.slot,
            },
          },
          handler,
          logger,
          // Its fastest controller: every message in parallel, no ordering.
          { concurrencyStrategy: createReplicationFullConcurrencyController() },
        );
      }
    };
    stop = async () => {
      await shutdown?.();
    };
  }

  const result = await measure(counter, job.capMs, { start, stop }, () => ({
    times: job.recordTimes ? [...times] : undefined,
  }));
  sns.destroy();
  await emit({ t: "result", ...result });
}

// ---- consumers ----

const benchHandlers = defineHandlers<{ "example.created": { name: string } }>({
  "example.created": {
    parse: (payload) => {
      const name = (payload as { name?: unknown } | null)?.name;
      if (typeof name !== "string" || name === "") throw new Error("name must be a non-empty string");
      return { name };
    },
    // The same one-row effect as apps/consumer/src/example-handlers.ts.
    async handle(event, { trx }) {
      await trx
        .insertInto("example_effects")
        .values({ event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) })
        .execute();
    },
  },
});

async function runConsumer(job: ConsumerJob): Promise<void> {
  const counter = new Counter(job.expected);
  const sqs = createSqsClient(awsSettings(job.aws.sqsEndpoint, job.pollers + job.concurrency + 8));
  let duplicates = () => 0;
  let start: () => void;
  let stop: () => Promise<void>;
  const database = createDatabase({
    url: job.url,
    service: "bench-consumer",
    poolMax: job.concurrency + 2,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await Promise.all(
    Array.from({ length: Math.min(job.concurrency, 20) }, () => database.pool.query("SELECT 1")),
  );
  if (job.impl === "ours") {
    const consumer = createConsumer({
      handlers: benchHandlers,
      pool: database.pool,
      sqs,
      queueUrl: job.queueUrl,
      name: job.name,
      log: createLogger({ service: "bench", version: "0", level: "warn" }),
      pollers: job.pollers,
      concurrency: job.concurrency,
      waitTimeSeconds: 1,
    });
    let last = 0;
    const poll = setInterval(() => {
      const processed = consumer.stats().processed;
      counter.add(processed - last);
      last = processed;
    }, 2);
    duplicates = () => consumer.stats().duplicates;
    start = () => consumer.start();
    stop = async () => {
      clearInterval(poll);
      await consumer.drain();
    };
  } else {
    // sqs-consumer 14 with the same inbox transaction in its handler: claim, effect, commit.
    let dups = 0;
    duplicates = () => dups;
    const inbox = async (message: Message): Promise<boolean> => {
      const eventId = message.MessageAttributes?.[EVENT_ID_ATTRIBUTE]?.StringValue;
      const eventType = message.MessageAttributes?.[EVENT_TYPE_ATTRIBUTE]?.StringValue ?? "unknown";
      const client = await database.pool.connect();
      try {
        await client.query("BEGIN");
        const claim = await client.query(
          `INSERT INTO inbox (consumer, event_id, message_id) VALUES ($1, $2, $3)
           ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
          [job.name, eventId, message.MessageId],
        );
        if (claim.rowCount === 0) {
          await client.query("ROLLBACK");
          dups += 1;
          return true;
        }
        await client.query(
          "INSERT INTO example_effects (event_id, event_type, payload) VALUES ($1, $2, $3)",
          [eventId, eventType, message.Body],
        );
        await client.query("COMMIT");
        counter.add();
        return true;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    };
    const { instances, batchSize } = {
      instances: job.pollers,
      batchSize: Math.min(10, Math.ceil(job.concurrency / job.pollers)),
    };
    const consumers = Array.from({ length: instances }, () =>
      SqsConsumer.create({
        queueUrl: job.queueUrl,
        sqs,
        batchSize,
        waitTimeSeconds: 1,
        messageAttributeNames: ["All"],
        ...(job.readmeShutdown ? { pollingCompleteWaitTimeMs: 10_000 } : {}),
        ...(job.impl === "sqs-consumer-batch"
          ? {
              handleMessageBatch: async (messages: Message[]) => {
                const results = await Promise.allSettled(messages.map(inbox));
                return messages.filter((_, i) => results[i]?.status === "fulfilled");
              },
            }
          : {
              handleMessage: async (message: Message) => {
                await inbox(message);
                return message;
              },
            }),
      }),
    );
    for (const consumer of consumers) {
      consumer.on("error", (error) => void emit({ t: "log", msg: `sqs-consumer error: ${error.message}` }));
      consumer.on(
        "processing_error",
        (error) => void emit({ t: "log", msg: `sqs-consumer processing_error: ${error.message}` }),
      );
    }
    if (job.readmeShutdown) {
      // Its README's graceful shutdown, verbatim in substance: stop(), exit(0) on `stopped`.
      const shutdown = () => {
        for (const consumer of consumers) consumer.stop();
        let stopped = 0;
        for (const consumer of consumers)
          consumer.once("stopped", () => {
            stopped += 1;
            if (stopped === consumers.length) process.exit(0);
          });
      };
      process.once("SIGTERM", shutdown);
      process.once("SIGINT", shutdown);
    }
    start = () => {
      for (const consumer of consumers) consumer.start();
    };
    stop = async () => {
      for (const consumer of consumers) consumer.stop();
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    };
  }

  const result = await measure(counter, job.capMs, { start, stop }, () => ({ duplicates: duplicates() }));
  sqs.destroy();
  await database.close(2_000).catch(() => {});
  await emit({ t: "result", ...result });
}

try {
  if (job.kind === "relay") await runRelay(job);
  else await runConsumer(job);
  process.exit(EXIT_OK);
} catch (error) {
  await emit({ t: "log", msg: `job failed: ${(error as Error).stack ?? String(error)}` });
  process.exit(EXIT_CRASH);
}
