import { EventEmitter } from "node:events";
import { Deadline } from "@outbox/client";
import { Capacity, DrainDeadline, LoopWatch, settlesBefore, untilAborted } from "@outbox/shared";
import { Registry } from "prom-client";
import type { BatchReport } from "./batch.js";
import { type RelayContext, type RunningLoop, relaySteps, runLoop } from "./loop.js";
import { createRelayMetrics } from "./metrics.js";
import { outboxStore } from "./outbox-store.js";
import { type RelayOptions, relayOptionValues } from "./relay-options.js";
import { startRetention } from "./retention.js";
import { OutageBackoff } from "./sns/outage-backoff.js";
import { createChunkPublisher } from "./sns/publish-chunk.js";
import { TopicLimits } from "./sns/topic-limits.js";
import { wakeOnInsert } from "./wake-on-insert.js";

/** What one run did, and what it left: the fields of the daemon's `drained` line. */
export interface RelaySummary {
  readonly [field: string]: string | number | boolean;
  /** The drain deadline did not cut the batch in flight short. */
  readonly clean: boolean;
  /** Events this relay published since it started. */
  readonly published: number;
  /** Rows still neither published nor dead in the table (all relays), counted at the end; -1 if unknown. */
  readonly unsent: number;
  /** Rows this relay marked dead since it started. */
  readonly dead: number;
}

export interface RelayEvents {
  /** After every non-empty batch. */
  batch: [report: BatchReport];
  /** A row was marked dead, with the reason. */
  dead: [event: { id: string; topic: string; reason: string }];
  /** A batch failed (database unreachable, …); the relay waits and carries on. */
  batchFailed: [error: unknown];
}

export interface Relay extends EventEmitter<RelayEvents> {
  readonly id: string;
  /** Rejects if the relay loop fails on its own (a bug: batch errors are retried); never resolves. */
  readonly failure: Promise<never>;
  /**
   * Starts claiming, publishing and marking, until `stop` or `drain`; once only. Until then the relay
   * holds no connection and no lease: listen to its events first.
   */
  start(): void;
  /** Stops claiming; the batch in flight goes on, batches claimed ahead are released. `drain` too. */
  stop(): void;
  /**
   * Stops claiming, releases the batches claimed ahead (they have sent nothing), lets the batch in flight
   * publish and mark to the end, and when `deadline` aborts first, cuts the SNS calls and releases what
   * was not sent. No PublishBatch starts that could not end by the deadline's expiry (the rest is
   * released unsent), so the deadline need not cut one that SNS may already have taken. Resolves once
   * nothing is held, or one statement's time (`leaseMarginMs`) after the deadline aborts (it expired,
   * or a parent aborted it) whatever is still running: a query the server leaves unanswered is not
   * waited for (its rows come back when their lease ends). Without a deadline, the drain gets
   * `drainTimeoutMs` (RELAY_DRAIN_TIMEOUT_MS's default) from now.
   */
  drain(deadline?: Deadline): Promise<RelaySummary>;
  /** What a forced exit would abandon: leased rows and requests in flight. */
  inFlight(): Record<string, number>;
  /**
   * Why the claim loop has stopped turning (a claim running past `claimBoundMs`), or undefined;
   * always undefined once stopping, when the drain's own deadline bounds what is left.
   */
  stalled(): string | undefined;
}

/**
 * Makes a relay, checking its options (a RelayOptionsError names the first one refused); `start` sets
 * it claiming, publishing and marking until `drain` is called.
 */
export function createRelay(options: RelayOptions): Relay {
  const settings = relayOptionValues(options);
  const { db, log } = options;
  const topicArns = options.topicArns ?? {};
  const defaultTopicArn = options.defaultTopicArn || undefined;
  const outage = new OutageBackoff({ baseMs: settings.backoff.baseMs, maxMs: settings.outageBackoffMaxMs });
  const metrics = createRelayMetrics(options.metrics ?? new Registry(), db, outage);
  const events = new EventEmitter<RelayEvents>();
  const relay: RelayContext = {
    settings,
    store: outboxStore(db, settings),
    sns: createChunkPublisher(options.publisher, { timeoutMs: settings.publishTimeoutMs, metrics, log }),
    limits: new TopicLimits(options.publisher.messageLimit?.bind(options.publisher), {
      timeoutMs: settings.publishTimeoutMs,
      log,
    }),
    outage,
    capacity: new Capacity(settings.publishConcurrency),
    drain: new DrainDeadline(),
    claims: new LoopWatch({ loop: "claim loop", step: "claim", boundMs: settings.claimBoundMs }),
    metrics,
    events,
    log,
    resolveTopic: (topic) => topicArns[topic] ?? defaultTopicArn,
  };
  let published = 0;
  let dead = 0;
  events.on("batch", (report) => {
    published += report.published;
    dead += report.dead;
  });
  // Take no new work: aborted by stop() or drain().
  const stopping = new AbortController();
  let running: { readonly loop: RunningLoop; stop(within: Deadline): Promise<unknown> } | undefined;
  let failWith: (error: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => {
    failWith = reject;
  });
  // The caller may never look at `failure`; the loop's own errors are all caught, so this is for bugs.
  failure.catch(() => {});

  const start = () => {
    if (running) throw new Error("relay already started");
    if (stopping.signal.aborted) throw new Error("relay stopped: create another one to start again");
    const wakeup = wakeOnInsert(options.listenUrl, log);
    const retention = options.retention ? startRetention(db, options.retention, log) : null;
    // Read at once, not awaited: a row over a limit not read yet waits for it (batch.ts reads it
    // again before it kills a row, and a read asked for while one runs shares it). Each read is
    // bounded by the publish timeout and cut by the drain.
    const limitsRead = relay.limits.load(
      [...Object.values(topicArns), ...(defaultTopicArn ? [defaultTopicArn] : [])],
      relay.drain.deadline,
    );
    const loop = runLoop(settings, relaySteps(relay, wakeup), stopping.signal);
    loop.done.catch(failWith);
    running = {
      loop,
      stop: (within) =>
        Promise.all([
          wakeup.close(),
          retention ? settlesBefore(retention.stop(), within) : true,
          settlesBefore(limitsRead, within),
        ]),
    };
  };

  /** What is left in the table; -1 when the database cannot tell (or not before `giveUp`). */
  const countUnsent = async (giveUp: Deadline): Promise<number> => {
    try {
      return await untilAborted(relay.store.countUnsent(), giveUp);
    } catch (error) {
      if (giveUp.aborted)
        log?.warn(
          { marginMs: settings.leaseMarginMs },
          "could not count unsent rows: no answer within the drain's last-statement margin",
        );
      else log?.warn({ err: error }, "could not count unsent rows");
      return -1;
    }
  };

  const leasedRows = () => running?.loop.leasedRows() ?? 0;
  return Object.assign(events, {
    id: settings.relayId,
    failure,
    start,
    stop() {
      stopping.abort(new Error("relay stopping"));
    },
    async drain(given?: Deadline): Promise<RelaySummary> {
      stopping.abort(new Error("relay draining"));
      // The daemon's deadline is runDaemon's (RELAY_DRAIN_TIMEOUT_MS from SIGTERM), applied once.
      const deadline = given ?? Deadline.after(settings.drainTimeoutMs);
      const unlink = relay.drain.follow(deadline);
      // The batch cut at the deadline still gets one statement's time for its last marks and releases
      // (`leaseMarginMs`, the statement timeout, which the lease keeps back for them). A live server
      // answers them within it; past it the database is not answering.
      const giveUp = deadline.withGrace(settings.leaseMarginMs);
      try {
        // Raced, not awaited: a statement the server never answers (a frozen server) would hold the
        // stop past its budget, and the platform's SIGKILL would end it anyway.
        const ended = await settlesBefore(
          running ? running.loop.done.catch(() => {}) : Promise.resolve(),
          giveUp,
        );
        const clean = !deadline.aborted;
        if (!ended)
          log?.warn(
            { leasedRows: leasedRows(), marginMs: settings.leaseMarginMs },
            "drain deadline: the batch's statements are unanswered; its rows are left to their lease",
          );
        await running?.stop(giveUp);
        return { clean, published, unsent: await countUnsent(giveUp), dead };
      } finally {
        giveUp.dispose();
        unlink();
        if (given === undefined) deadline.dispose();
      }
    },
    inFlight: () => ({ leasedRows: leasedRows(), publishRequests: relay.sns.requestsInFlight() }),
    stalled: () => (stopping.signal.aborted ? undefined : relay.claims.stalled()),
  });
}
