import { setMaxListeners } from "node:events";
import { Deadline } from "@outbox/client";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import { Capacity, DrainDeadline, LoopWatch } from "@outbox/shared";
import { Registry } from "prom-client";
import { type ConsumerOptions, resolveOptions } from "./consumer-options.js";
import { type ConsumerCounts, ResultCounts } from "./loop/count-results.js";
import { DatabaseOutage, type OutageCounts } from "./loop/database-outage.js";
import { MessageDispatcher } from "./loop/dispatch.js";
import { drainWithin } from "./loop/drain.js";
import { IntakeGate, type PauseReason } from "./loop/intake-gate.js";
import { KillSwitch, type KillSwitchCounts } from "./loop/kill-switch.js";
import { startPollers } from "./loop/pollers.js";
import { messagePipeline } from "./message/pipeline.js";
import { createConsumerMetrics } from "./metrics.js";
import { DeleteBuffer } from "./queue/delete-buffer.js";
import { VisibilityHeartbeat } from "./queue/heartbeat.js";
import { MessageQueue } from "./queue/message-queue.js";

/** Counts since start. */
export interface ConsumerStats extends ConsumerCounts, OutageCounts, KillSwitchCounts {
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
   * Stops intake and finishes every received message, then flushes the deletes. When `deadline`
   * aborts first, messages still in flight are rolled back and released. Without one, the drain
   * gets `drainTimeoutMs` from now.
   */
  drain(deadline?: Deadline): Promise<ConsumerSummary>;
  /** Rejects if the consumer breaks on its own (a bug, not a failing message); never resolves. */
  readonly failure: Promise<never>;
  inFlight(): { messages: number; deletes: number };
  stats(): ConsumerStats;
  /** What holds intake now (the database unreachable, the kill switch); empty while receiving. */
  pausedBy(): PauseReason[];
  /**
   * Why the poll loop has stopped turning (a receive running past `receiveBoundMs`), or undefined;
   * always undefined once intake stopped, when the drain's own deadline bounds what is left.
   */
  stalled(): string | undefined;
}

/**
 * SQS → inbox transaction → delete. Turns at-least-once delivery into exactly-once effects: the
 * inbox row and the handler's writes commit together, the delete follows the commit, and a stop
 * finishes (or releases) everything it received.
 */
export function createConsumer<DB>(options: ConsumerOptions<DB>): Consumer {
  const { numbers, delivery, name, receiveBoundMs } = resolveOptions(options);
  const { concurrency, visibilityTimeoutSeconds, handlerTimeoutMs, requestTimeoutMs } = numbers;
  const { sqs, queueUrl, log } = options;
  // The daemon's CONSUMER_DLQ_URL is "" when unset.
  const dlqUrl = options.dlqUrl || undefined;
  const fifo = queueUrl.endsWith(".fifo");
  const metrics = createConsumerMetrics(options.metrics ?? new Registry());

  const intake = new AbortController();
  const drain = new DrainDeadline();
  // One listener per waiting poller, each removed when done: not a leak.
  setMaxListeners(0, intake.signal);
  const capacity = new Capacity(concurrency);
  const receives = new LoopWatch({ loop: "poll loop", step: "receive", boundMs: receiveBoundMs });
  const counts = new ResultCounts(metrics);
  const gate = new IntakeGate();
  const database = new DatabaseOutage({
    pool: options.pool,
    probeTimeoutMs: numbers.statementTimeoutMs,
    gate,
    stopping: intake.signal,
    log,
    metrics,
  });
  const killSwitch = new KillSwitch({
    tripPercent: numbers.killSwitchTripPercent,
    activityThreshold: numbers.killSwitchActivityThreshold,
    windowMs: numbers.killSwitchWindowMs,
    restartMs: numbers.killSwitchRestartMs,
    restartMaxMs: numbers.killSwitchRestartMaxMs,
    gate,
    stopping: intake.signal,
    log,
    metrics,
  });
  const deletes = new DeleteBuffer({
    sqs,
    queueUrl,
    flushMs: numbers.deleteFlushMs,
    inFlight: (): number => dispatcher.handling,
    log,
    metrics,
  });
  const heartbeat = new VisibilityHeartbeat({
    sqs,
    queueUrl,
    visibilityTimeoutSeconds,
    marginMs: numbers.visibilityMarginMs,
    log,
    metrics,
  });
  let fail: (error: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // Observed by whoever awaits `failure` (runDaemon); a library user who does not must not crash on it.
  failure.catch(() => {});
  const pipeline = messagePipeline({
    consumer: name,
    queueUrl,
    delivery,
    handlerTimeoutMs,
    statementTimeoutMs: numbers.statementTimeoutMs,
    pool: options.pool,
    handlers: options.handlers,
    claimCheck:
      options.claimCheck === undefined
        ? undefined
        : {
            ...options.claimCheck,
            fetchTimeoutMs: numbers.claimCheckFetchTimeoutMs,
            maxPayloadBytes: numbers.claimCheckMaxBytes,
          },
    heartbeat,
    drain,
    drainMarginMs: numbers.visibilityMarginMs,
    database,
    retryBaseSeconds: numbers.retryBaseSeconds,
    retryMaxSeconds: numbers.retryMaxSeconds,
    retryFloorSeconds: () => killSwitch.retryFloorSeconds(),
    deadLetterQueue: dlqUrl !== undefined,
    counts,
    log,
    metrics,
  });
  const queue = new MessageQueue({ sqs, queueUrl, dlqUrl, deletes, fates: pipeline.fates, log });
  const dispatcher = new MessageDispatcher({
    fifo,
    visibilityTimeoutSeconds,
    handlerTimeoutMs,
    requestTimeoutMs,
    pipeline,
    queue,
    capacity,
    heartbeat,
    drain,
    drainMarginMs: numbers.visibilityMarginMs,
    counts,
    gate,
    killSwitch,
    metrics,
    log,
    fail,
  });
  let polling: Promise<void> = Promise.resolve();

  function stats(): ConsumerStats {
    return {
      ...counts.snapshot(),
      ...database.counts(),
      ...killSwitch.counts(),
      deleteFailures: deletes.lost,
    };
  }

  return {
    failure,
    start() {
      polling = startPollers(numbers.pollers, {
        sqs,
        receiveSqs: options.receiveSqs,
        queueUrl,
        waitTimeSeconds: numbers.waitTimeSeconds,
        fifo,
        visibilityTimeoutSeconds,
        requestTimeoutMs,
        capacity,
        // Wait for a full receive's worth of slots (all of them below 10) before polling: one receive,
        // and the DeleteMessageBatch that follows it, cost about the same CPU for 1 message as for 10.
        // Waiting for half only (the former rule) made a single poller at concurrency 10 receive and
        // delete 5 at a time: about twice the SDK calls per message. Overlap comes from more pollers.
        minBatch: Math.min(MAX_BATCH_ENTRIES, concurrency),
        stopping: intake.signal,
        gate,
        watch: receives,
        onBatch: (batch) => dispatcher.onBatch(batch),
        log,
        metrics,
      });
      polling.catch(fail);
    },
    stop() {
      intake.abort();
    },
    // The order of a stop: no more receives; the messages in hand finish (or, past the deadline,
    // are rolled back and released); no more lease renewals; the last deletes go out.
    async drain(given) {
      intake.abort();
      // The daemon's deadline is runDaemon's (CONSUMER_DRAIN_TIMEOUT_MS from SIGTERM), applied once.
      const deadline = given ?? Deadline.after(numbers.drainTimeoutMs);
      const lostBefore = deletes.lost;
      const inTime = await drainWithin(drain, deadline, {
        finished: (async () => {
          await polling;
          await dispatcher.finished();
        })(),
        inHand: () => dispatcher.inHand(),
        stopHeartbeat: () => heartbeat.stop(),
        flushDeletes: () => deletes.flush(),
      });
      if (given === undefined) deadline.dispose();
      const clean = inTime && deletes.lost === lostBefore;
      return { clean, ...stats() };
    },
    inFlight() {
      return { messages: dispatcher.handling, deletes: deletes.pending };
    },
    stats,
    pausedBy: () => gate.pausedBy(),
    stalled: () => (intake.signal.aborted ? undefined : receives.stalled()),
  };
}
