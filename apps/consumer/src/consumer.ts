import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import type { Message, SQSClient } from "@aws-sdk/client-sqs";
import { context } from "@opentelemetry/api";
import { Deadline, type Logger, numericOption, type Setting } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import { Registry } from "prom-client";
import { Capacity } from "./capacity.js";
import { decodeMessage } from "./decode-message.js";
import { DeleteBuffer } from "./delete-buffer.js";
import { ConsumerOptionsError, DrainExpiredError, PoisonMessageError, PoisonReason } from "./errors.js";
import type { ConsumedEvent, HandlerEntry, HandlerSet } from "./handlers.js";
import { GroupLanes } from "./message-groups.js";
import { type ConsumerMetrics, createConsumerMetrics, type MessageResult } from "./metrics.js";
import { sendToDeadLetterQueue } from "./poison.js";
import { MAX_BATCH, type ReceivedBatch, startPollers } from "./poll-messages.js";
import { runInboxTransaction } from "./process-message.js";
import { startProcessSpan } from "./process-span.js";
import { giveBack, retryDelaySeconds, retryLater } from "./release-messages.js";
import { consumerSettings } from "./settings.js";
import { type Lease, VisibilityHeartbeat } from "./visibility-heartbeat.js";

export interface ConsumerOptions<DB> {
  readonly handlers: HandlerSet<DB>;
  /**
   * The pg pool (`DatabaseHandle.pool`) of a database with the `inbox` table (migrateToLatest).
   * Handlers get a Kysely<DB> over their message's transaction.
   */
  readonly pool: PostgresPool;
  readonly sqs: SQSClient;
  /**
   * A URL ending in `.fifo` is a FIFO queue: each message group's messages are handled one after
   * another, in order, and a failing message holds its group (see GroupLanes).
   */
  readonly queueUrl: string;
  /** Poison goes here at once; without it, poison waits for the queue's redrive policy. */
  readonly dlqUrl?: string;
  /** Key of this consumer in the inbox. Default "consumer". */
  readonly name?: string;
  readonly log: Logger;
  /** Where the metrics are registered; a private registry by default. */
  readonly metrics?: Registry;
  readonly pollers?: number;
  readonly concurrency?: number;
  readonly waitTimeSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  readonly handlerTimeoutMs?: number;
  readonly visibilityMarginMs?: number;
  /** Used by `drain()` without a signal of its own; the daemon's drain deadline comes from runDaemon. */
  readonly drainTimeoutMs?: number;
  readonly deleteFlushMs?: number;
  readonly retryBaseSeconds?: number;
  readonly retryMaxSeconds?: number;
  /** DB_STATEMENT_TIMEOUT_MS; the per-message statement timeout is never above it. */
  readonly statementTimeoutMs?: number;
  /** AWS_REQUEST_TIMEOUT_MS: a long poll may stay silent this much longer than its wait time. */
  readonly requestTimeoutMs?: number;
}

/** Counts since start. */
export interface ConsumerStats {
  readonly processed: number;
  readonly duplicates: number;
  readonly released: number;
  readonly poison: number;
  readonly failed: number;
  readonly deleteFailures: number;
}

/** What the drain returns; runDaemon logs it as the `drained` line. */
export interface ConsumerSummary extends ConsumerStats {
  readonly [field: string]: number | boolean;
  /** Every received message settled and every delete sent, before the drain deadline. */
  readonly clean: boolean;
}

export interface Consumer {
  /** Starts the long polls. */
  start(): void;
  /** Stops intake: no receive is sent any more; a long poll already open is left to return. */
  stop(): void;
  /**
   * Stops intake and finishes every received message, then flushes the deletes. When
   * `drainDeadline` aborts first, messages still in flight are rolled back and released.
   */
  drain(drainDeadline?: AbortSignal): Promise<ConsumerSummary>;
  /** Rejects if the consumer breaks on its own (a bug, not a failing message); never resolves. */
  readonly failure: Promise<never>;
  inFlight(): { messages: number; deletes: number };
  stats(): ConsumerStats;
}

/** Each numeric option and the CONSUMER_… (or DB_/AWS_) setting the daemon fills it from. */
const optionSettings = {
  pollers: consumerSettings.pollers,
  concurrency: consumerSettings.concurrency,
  waitTimeSeconds: consumerSettings.waitTimeSeconds,
  visibilityTimeoutSeconds: consumerSettings.visibilityTimeoutSeconds,
  handlerTimeoutMs: consumerSettings.handlerTimeoutMs,
  visibilityMarginMs: consumerSettings.visibilityMarginMs,
  drainTimeoutMs: consumerSettings.drainTimeoutMs,
  deleteFlushMs: consumerSettings.deleteFlushMs,
  retryBaseSeconds: consumerSettings.retryBaseSeconds,
  retryMaxSeconds: consumerSettings.retryMaxSeconds,
  statementTimeoutMs: consumerSettings.dbStatementTimeoutMs,
  requestTimeoutMs: consumerSettings.awsRequestTimeoutMs,
} satisfies { [K in keyof ConsumerOptions<unknown>]?: Setting<number> };

/** The option as given, checked by its setting's rules, or that setting's default. */
function optionValue<DB>(options: ConsumerOptions<DB>, name: keyof typeof optionSettings): number {
  return numericOption(
    optionSettings[name],
    options[name],
    name,
    (message) => new ConsumerOptionsError(message),
  );
}

/** After the drain deadline: time to release what was aborted and flush deletes (taken from the shutdown overhead). */
const AFTER_DEADLINE_GRACE_MS = 1_000;

function settled(tasks: ReadonlySet<Promise<void>>): Promise<void> {
  return Promise.all(tasks).then(() => undefined);
}

/** Waits for `work`, at most `ms`; resolves false on timeout. Leaves no timer behind either way. */
async function within(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SQS → inbox transaction → delete. Turns at-least-once delivery into exactly-once effects: the
 * inbox row and the handler's writes commit together, the delete follows the commit, and a stop
 * finishes (or gives back) everything it received.
 */
export function createConsumer<DB>(options: ConsumerOptions<DB>): Consumer {
  const pollers = optionValue(options, "pollers");
  const concurrency = optionValue(options, "concurrency");
  const waitTimeSeconds = optionValue(options, "waitTimeSeconds");
  const visibilityTimeoutSeconds = optionValue(options, "visibilityTimeoutSeconds");
  const handlerTimeoutMs = optionValue(options, "handlerTimeoutMs");
  const marginMs = optionValue(options, "visibilityMarginMs");
  const drainTimeoutMs = optionValue(options, "drainTimeoutMs");
  const retryBaseSeconds = optionValue(options, "retryBaseSeconds");
  const retryMaxSeconds = optionValue(options, "retryMaxSeconds");
  const statementTimeoutMs = optionValue(options, "statementTimeoutMs");
  const requestTimeoutMs = optionValue(options, "requestTimeoutMs");
  if (retryBaseSeconds > retryMaxSeconds) {
    throw new ConsumerOptionsError(
      `retryBaseSeconds (${retryBaseSeconds}) must not exceed retryMaxSeconds (${retryMaxSeconds})`,
    );
  }
  const name = options.name ?? "consumer";
  const { sqs, queueUrl, pool, handlers, log } = options;
  const fifo = queueUrl.endsWith(".fifo");
  const metrics: ConsumerMetrics = createConsumerMetrics(options.metrics ?? new Registry());

  const counts: Record<Exclude<MessageResult, "duplicate">, number> & { duplicates: number } = {
    processed: 0,
    duplicates: 0,
    released: 0,
    poison: 0,
    failed: 0,
  };
  const intake = new AbortController();
  // Aborted when the drain deadline passes: every message deadline is linked to it.
  const drainExpired = new AbortController();
  // One listener per in-flight message or waiting poller, each removed when done: not a leak.
  setMaxListeners(0, intake.signal, drainExpired.signal);
  const capacity = new Capacity(concurrency);
  const tasks = new Set<Promise<void>>();
  const deletes = new DeleteBuffer({
    sqs,
    queueUrl,
    flushMs: optionValue(options, "deleteFlushMs"),
    inFlight: () => handling,
    log,
    metrics,
  });
  const heartbeat = new VisibilityHeartbeat({
    sqs,
    queueUrl,
    visibilityTimeoutSeconds,
    marginMs,
    log,
    metrics,
  });
  let drainBudget: Deadline | undefined;
  /** Messages received and not yet settled (reserved slots of open polls are not messages yet). */
  let handling = 0;
  let polling: Promise<void> = Promise.resolve();
  let fail: (error: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // Observed by whoever awaits `failure` (runDaemon); a library user who does not must not crash on it.
  failure.catch(() => {});

  // Labelled children made once: prom-client hashes a labels object on every inc/observe otherwise.
  const resultCounters = new Map<MessageResult, { inc(): void }>();
  const handlerTimers = new Map<MessageResult, { observe(value: number): void }>();
  function resultCounter(result: MessageResult): { inc(): void } {
    let counter = resultCounters.get(result);
    if (counter === undefined) {
      counter = metrics.results.labels({ result });
      resultCounters.set(result, counter);
    }
    return counter;
  }
  function handlerTimer(result: MessageResult): { observe(value: number): void } {
    let timer = handlerTimers.get(result);
    if (timer === undefined) {
      timer = metrics.handlerSeconds.labels({ result });
      handlerTimers.set(result, timer);
    }
    return timer;
  }

  function settle(result: MessageResult): void {
    if (result === "duplicate") counts.duplicates += 1;
    else counts[result] += 1;
    resultCounter(result).inc();
    if (result === "duplicate") metrics.duplicates.inc();
  }

  function held(message: Message): { messageId: string; receiptHandle: string } {
    return { messageId: message.MessageId ?? "", receiptHandle: message.ReceiptHandle ?? "" };
  }

  function receiveCountOf(message: Message): number {
    return Number(message.Attributes?.ApproximateReceiveCount ?? "1");
  }

  function retryDelayOf(message: Message): number {
    return retryDelaySeconds(receiveCountOf(message), retryBaseSeconds, retryMaxSeconds);
  }

  /** During the drain: too little time left to give a message more than the safety margin. */
  function tooLateToStart(): boolean {
    return drainBudget !== undefined && drainBudget.remainingMs() <= marginMs;
  }

  async function quarantine(message: Message, reason: PoisonReason): Promise<MessageResult> {
    metrics.poison.inc({ kind: reason.kind });
    log.warn({ messageId: message.MessageId, reason: reason.toString() }, "poison message");
    if (!options.dlqUrl) return retry(message, reason);
    try {
      await sendToDeadLetterQueue(sqs, options.dlqUrl, message, reason);
    } catch (error) {
      log.warn(
        { err: error, messageId: message.MessageId },
        "poison message not moved to the DLQ; retrying later",
      );
      return retry(message, error);
    }
    deletes.add(held(message));
    return "poison";
  }

  /** Gives the message back for a later attempt; the redrive policy ends it in the DLQ. */
  async function retry(message: Message, cause: unknown): Promise<MessageResult> {
    const receiveCount = receiveCountOf(message);
    const delaySeconds = retryDelayOf(message);
    log.warn(
      { messageId: message.MessageId, receiveCount, retryInSeconds: delaySeconds, err: cause },
      "message failed; retrying later",
    );
    try {
      await retryLater(sqs, queueUrl, held(message), delaySeconds);
    } catch (error) {
      // The lease runs out instead: the retry only comes later than planned.
      log.warn({ err: error, messageId: message.MessageId }, "retry delay not set");
    }
    return "failed";
  }

  async function release(message: Message): Promise<MessageResult> {
    try {
      await giveBack(sqs, queueUrl, [held(message)]);
    } catch (error) {
      log.warn({ err: error, messageId: message.MessageId }, "release failed; the lease will run out");
    }
    return "released";
  }

  /** Gives back messages never started, visible again after `visibilitySeconds`; settles them as released. */
  async function releaseUntouched(messages: readonly Message[], visibilitySeconds: number): Promise<void> {
    try {
      await giveBack(sqs, queueUrl, messages.map(held), visibilitySeconds);
    } catch (error) {
      log.warn({ err: error, messages: messages.length }, "release failed; the lease will run out");
    }
    for (let index = 0; index < messages.length; index += 1) settle("released");
  }

  async function runHandler(
    message: Message,
    leaseExpiresAt: number,
    event: ConsumedEvent,
    entry: HandlerEntry<string, unknown, DB>,
  ): Promise<MessageResult> {
    const remaining =
      drainBudget === undefined ? handlerTimeoutMs : Math.min(handlerTimeoutMs, drainBudget.remainingMs());
    const deadline = Deadline.after(remaining, drainExpired.signal);
    const lease: Lease = {
      messageId: message.MessageId ?? "",
      receiptHandle: message.ReceiptHandle ?? "",
      deadline,
      expiresAt: leaseExpiresAt,
    };
    heartbeat.track(lease);
    const started = performance.now();
    // Continues the trace the message carries. Only the handler and the retry's log line run in its
    // context: a flush timer the delete buffer starts (deletes.add, quarantine) serves many messages
    // and must not inherit this one's trace.
    const span = startProcessSpan(event, queueUrl, name);
    let result: MessageResult | undefined;
    try {
      const handle = typeof entry === "function" ? entry : entry.handle;
      result = await context.with(span.context, () =>
        runInboxTransaction({
          pool,
          consumer: name,
          event,
          handle,
          deadline,
          statementTimeoutMs,
          log: () => log.child({ eventId: event.id, eventType: event.type, messageId: event.messageId }),
        }),
      );
      heartbeat.untrack(lease);
      // Only after the commit: deleting first would lose the event if the commit then failed.
      deletes.add(lease);
    } catch (error) {
      heartbeat.untrack(lease);
      span.fail(error);
      if (error instanceof PoisonMessageError) {
        result = await quarantine(message, new PoisonReason("rejected_by_handler", error.message));
      } else if (error instanceof DrainExpiredError) {
        result = await release(message);
      } else {
        result = await context.with(span.context, () => retry(message, error));
      }
    } finally {
      deadline.dispose();
      span.end(result);
    }
    handlerTimer(result).observe((performance.now() - started) / 1_000);
    return result;
  }

  async function handleMessage(message: Message, leaseExpiresAt: number): Promise<MessageResult> {
    // A message of a FIFO group whose turn comes late in the drain (others start on receipt, and
    // onBatch already checked for them).
    if (tooLateToStart()) return release(message);
    const decoded = decodeMessage(message);
    if (decoded instanceof PoisonReason) return quarantine(message, decoded);
    const entry = handlers.find(decoded.eventType);
    if (entry === undefined) {
      return quarantine(
        message,
        new PoisonReason("unknown_event_type", `no handler for "${decoded.eventType}"`),
      );
    }
    let payload = decoded.payload;
    if (typeof entry !== "function") {
      try {
        payload = entry.parse(decoded.payload);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        return quarantine(message, new PoisonReason("payload_rejected", detail));
      }
    }
    const event: ConsumedEvent = {
      id: decoded.eventId,
      type: decoded.eventType,
      payload,
      headers: decoded.headers,
      messageId: message.MessageId ?? "",
      receiveCount: receiveCountOf(message),
    };
    return runHandler(message, leaseExpiresAt, event, entry);
  }

  /** Messages that leave our hands: no longer handled, their slots free. */
  function leave(count: number): void {
    handling -= count;
    metrics.inFlight.dec(count);
    capacity.release(count);
  }

  /** Handles and settles one message; resolves undefined (never rejects) when handling crashed. */
  async function handleAndSettle(
    message: Message,
    leaseExpiresAt: number,
  ): Promise<MessageResult | undefined> {
    try {
      const result = await handleMessage(message, leaseExpiresAt);
      settle(result);
      return result;
    } catch (error) {
      // Every expected failure is handled above; this is a bug, and the lease returns the message.
      log.error({ err: error, messageId: message.MessageId }, "message handling crashed");
      fail(error);
      return undefined;
    } finally {
      leave(1);
    }
  }

  /**
   * FIFO: how long the rest of a message's group is held after it ended so. A retry holds it for
   * the retry delay, a release (or a crash) gives it back at once; any other end lets it go on.
   */
  function holdAfter(message: Message, result: MessageResult | undefined): number | undefined {
    if (result === "failed") return retryDelayOf(message);
    if (result === "released" || result === undefined) return 0;
    return undefined;
  }

  const lanes = new GroupLanes({
    run: async (message, leaseExpiresAt) =>
      holdAfter(message, await handleAndSettle(message, leaseExpiresAt)),
    giveBack: async (messages, visibilitySeconds) => {
      await releaseUntouched(messages, visibilitySeconds);
      leave(messages.length);
    },
    heartbeat,
    // Each message ahead ends by its deadline, plus one SQS call to settle it.
    waitDeadline: (ahead) =>
      Deadline.after(ahead * (handlerTimeoutMs + requestTimeoutMs), drainExpired.signal),
  });

  function track(task: Promise<unknown>): void {
    const tracked: Promise<void> = task.then(
      () => {
        tasks.delete(tracked);
      },
      (error: unknown) => {
        tasks.delete(tracked);
        fail(error);
      },
    );
    tasks.add(tracked);
  }

  function dispatch(message: Message, sentAt: number): void {
    handling += 1;
    metrics.inFlight.inc();
    const leaseExpiresAt = sentAt + visibilityTimeoutSeconds * 1_000;
    const group = fifo ? message.Attributes?.MessageGroupId : undefined;
    if (group === undefined) {
      track(handleAndSettle(message, leaseExpiresAt));
      return;
    }
    const lane = lanes.add(group, message, leaseExpiresAt);
    if (lane !== undefined) track(lane);
  }

  function onBatch(batch: ReceivedBatch): void {
    // A long poll that was open at the stop: process what it brought if the drain can still give
    // each message more than the safety margin, else give it back at once.
    if (tooLateToStart()) {
      track(releaseUntouched(batch.messages, 0).then(() => capacity.release(batch.messages.length)));
      return;
    }
    for (const message of batch.messages) dispatch(message, batch.sentAt);
  }

  function stats(): ConsumerStats {
    return { ...counts, deleteFailures: deletes.lost };
  }

  return {
    failure,
    start() {
      polling = startPollers(pollers, {
        sqs,
        queueUrl,
        waitTimeSeconds,
        fifo,
        visibilityTimeoutSeconds,
        requestTimeoutMs,
        capacity,
        // Wait for half the slots (at most a full batch) before polling: receives stay near full
        // (one receive costs about the same CPU for 1 message as for 10) while the next batch is
        // already on its way when the current one is half done.
        minBatch: Math.max(1, Math.min(MAX_BATCH, Math.floor(concurrency / 2))),
        stopping: intake.signal,
        onBatch,
        log,
        metrics,
      });
      polling.catch(fail);
    },
    stop() {
      intake.abort();
    },
    async drain(drainDeadline) {
      intake.abort();
      const budget = Deadline.after(drainTimeoutMs, drainDeadline);
      drainBudget = budget;
      const lostBefore = deletes.lost;
      const finished = (async () => {
        await polling;
        while (tasks.size > 0) await settled(tasks);
      })();
      const inTime = await within(finished, budget.remainingMs());
      if (!inTime) {
        // Roll back what is still running and give it back: a message released now is picked up
        // at once elsewhere, one abandoned would wait for its lease to run out.
        drainExpired.abort(new DrainExpiredError("drain timed out"));
        await within(settled(tasks), AFTER_DEADLINE_GRACE_MS);
      }
      await heartbeat.stop();
      const flushed = await within(deletes.flush(), budget.remainingMs() + AFTER_DEADLINE_GRACE_MS);
      budget.dispose();
      const clean = inTime && flushed && deletes.lost === lostBefore;
      return { clean, ...stats() };
    },
    inFlight() {
      return { messages: handling, deletes: deletes.pending };
    },
    stats,
  };
}
