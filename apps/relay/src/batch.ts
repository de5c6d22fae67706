import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import { backoffMs } from "@outbox/shared";
import type { RelayContext } from "./loop.js";
import type { FailureReason } from "./metrics.js";
import type { ClaimedRow, RowFailure } from "./outbox-store.js";
import { type BuiltEntry, buildEntry, type Chunk, type ReadyRow, takeChunk } from "./sns/entries.js";
import type { ChunkOutcome } from "./sns/publish-chunk.js";

/** Rows one claim leased, and when that claim was sent: the lease runs from there, not from the start. */
export interface ClaimedBatch {
  readonly rows: readonly ClaimedRow[];
  /** `performance.now()` just before the claim was sent: the database's lease can only end later. */
  readonly claimedAt: number;
}

export interface BatchReport {
  readonly claimed: number;
  readonly published: number;
  /** Rows that spent an attempt: SNS refused their entry, or they cannot be sent. */
  readonly failed: number;
  /** Rows sent back to wait without spending an attempt: their request failed as a whole (SNS down). */
  readonly deferred: number;
  readonly dead: number;
  readonly released: number;
  readonly durationMs: number;
}

/** A row that dies with this batch, announced once its mark has committed. */
interface DeadRow {
  readonly row: ClaimedRow;
  readonly reason: string;
  readonly cause: "attempts" | "unsendable";
}

/**
 * SNS's words for "over the topic's MaximumMessageSize": an entry's `InvalidParameter: … Message
 * too long`, or the whole request's `BatchRequestTooLong` (its SDK exception, …Exception).
 */
const TOO_LONG = /BatchRequestTooLong|Message too long/i;

/**
 * Publishes a claimed batch and marks what became of each row: every row's fate is decided in this
 * file, by one of `Batch`'s five fates (published, failed, deferred, dead, released). `handedOver` is
 * called once no row is left to send: the next batch may then take the publish capacity while this
 * one's last requests are answered. Rejects, after the requests under way returned, when a mark of
 * published rows failed (the rows come back when their lease ends) or a statement failed.
 */
export async function publishBatch(
  relay: RelayContext,
  claimed: ClaimedBatch,
  handedOver: () => void,
): Promise<BatchReport> {
  const batch = new Batch(relay, claimed);
  try {
    await batch.stream(handedOver);
    return await batch.commit();
  } finally {
    batch.dispose();
  }
}

/**
 * One batch's rows and what each became. A key whose row failed, waits or was cut off publishes
 * nothing more in this batch: its later rows would overtake it. Those are released and come back
 * behind it, blocked by the claim until it succeeds.
 */
class Batch {
  readonly #relay: RelayContext;
  readonly #rows: readonly ClaimedRow[];
  readonly #claimedAt: number;
  /**
   * Ends before the lease could run out under a row still being sent (counted from before the claim
   * was sent: a batch claimed ahead has already spent part of its lease waiting for the one before
   * it), or with the drain's deadline: either cuts the publishing short.
   */
  readonly #deadline: Deadline;
  /** `store.failedMarks()` when the batch started: a mark failed since, in any batch, stops it. */
  readonly #failedMarksBefore: number;
  /** This batch's first failed mark of published rows: the batch fails with it. */
  #markError: { readonly error: unknown } | undefined;
  #published = 0;
  #deferred = 0;
  readonly #failures: RowFailure[] = [];
  readonly #dead: DeadRow[] = [];
  readonly #released: string[] = [];
  readonly #stoppedKeys = new Set<string>();

  constructor(relay: RelayContext, { rows, claimedAt }: ClaimedBatch) {
    this.#relay = relay;
    this.#rows = rows;
    this.#claimedAt = claimedAt;
    const leaseEndsAt = claimedAt + relay.settings.leaseMs - relay.settings.leaseMarginMs;
    this.#deadline = Deadline.after(leaseEndsAt - performance.now(), relay.drain.deadline);
    this.#failedMarksBefore = relay.store.failedMarks();
  }

  dispose(): void {
    this.#deadline.dispose();
  }

  /**
   * Sends the rows (in seq order) through the relay's publish capacity as they become ready: every
   * unkeyed row and each key's first row at once, and a key's next row as soon as the chunk carrying
   * the one before it returned — answered and marked (or released, which holds the rest of the key
   * back). A key therefore never has two rows in flight, and its next event is published only after
   * the previous one is marked; every other key streams on through whichever capacity is free, with
   * no wave for the slowest request to hold up. Resolves once every row has its fate; rejects (after
   * the requests under way returned) if building or sending one threw.
   */
  async stream(handedOver: () => void): Promise<void> {
    const { capacity } = this.#relay;
    /** Each keyed row's next row of the same key in this batch. */
    const successor = new Map<ClaimedRow, ClaimedRow>();
    const lastOfKey = new Map<string, ClaimedRow>();
    const first: ClaimedRow[] = [];
    for (const row of this.#rows) {
      const before = row.orderingKey === null ? undefined : lastOfKey.get(row.orderingKey);
      if (before) successor.set(before, row);
      else first.push(row);
      if (row.orderingKey !== null) lastOfKey.set(row.orderingKey, row);
    }

    const ready: ReadyRow[] = [];
    /** Rows neither handed to a request nor given their fate yet. */
    let unsent = this.#rows.length;
    /** Builds and requests under way: the batch is done when none is and nothing is ready. */
    let running = 0;
    let thrown: { error: unknown } | undefined;
    let wake = () => {};
    const sent = (count: number) => {
      unsent -= count;
      if (unsent === 0) handedOver();
    };
    const track = (work: Promise<void>) => {
      running += 1;
      work
        .catch((error: unknown) => {
          thrown ??= { error };
        })
        .finally(() => {
          running -= 1;
          wake();
        });
    };
    const successorsOf = (done: readonly ClaimedRow[]) => done.flatMap((row) => successor.get(row) ?? []);
    const admit = (group: ClaimedRow[]): void =>
      track(
        this.#entries(group).then((built) => {
          ready.push(...built);
          sent(group.length - built.length);
          // A row given its fate here (held back, dead, failed) stopped its key: its successors are
          // released the same way, link by link, so that no row is left without one.
          const taken = new Set(built.map(({ row }) => row));
          const next = successorsOf(group.filter((row) => !taken.has(row)));
          if (next.length > 0) admit(next);
        }),
      );

    admit(first);
    for (;;) {
      if (ready.length > 0 && thrown === undefined) {
        await capacity.reserve(1, 1);
        // Only this loop takes from `ready`: what was there is still there.
        const chunk = takeChunk(ready);
        sent(chunk.rows.length);
        track(
          this.#send(chunk)
            .then(() => {
              const next = successorsOf(chunk.rows);
              if (next.length > 0) admit(next);
            })
            .finally(() => capacity.giveBack(1)),
        );
        continue;
      }
      if (running === 0) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (thrown) throw thrown.error;
  }

  /**
   * Marks what the batch decided besides its published rows (marked chunk by chunk): the failures
   * and deaths, then the releases; and reports it. Rejects, marking nothing, when a mark of published
   * rows failed: the batch fails and its rows come back when their lease ends.
   */
  async commit(): Promise<BatchReport> {
    const { store, metrics, log, events } = this.#relay;
    if (this.#markError) throw this.#markError.error;
    await store.recordFailures(this.#failures);
    // Announced (log, event, metric) only once recordFailures has committed: whoever hears "dead"
    // must find the row dead.
    for (const { row, reason, cause } of this.#dead) {
      metrics.dead.inc({ reason: cause });
      log?.error({ eventId: row.id, topic: row.topic, seq: row.seq, reason }, "event dead");
      events.emit("dead", { id: row.id, topic: row.topic, reason });
    }
    await store.release(this.#released);
    const durationMs = performance.now() - this.#claimedAt;
    metrics.batchSeconds.observe(durationMs / 1_000);
    return {
      claimed: this.#rows.length,
      published: this.#published,
      failed: this.#failures.length - this.#deferred,
      deferred: this.#deferred,
      dead: this.#dead.length,
      released: this.#released.length,
      durationMs,
    };
  }

  /**
   * The rows of `group` that may go out now (no earlier row of their key is unsent) as entries; the
   * others get their fate here: held back behind their key (released), or unsendable (dead). A row
   * over its topic's limit as known dies only after that limit was read again, once per topic and
   * group: the topic's MaximumMessageSize may have been raised since, and a row killed on a stale
   * limit would wait for an operator for nothing.
   */
  async #entries(group: readonly ClaimedRow[]): Promise<ReadyRow[]> {
    const { limits, resolveTopic, settings } = this.#relay;
    const build = (row: ClaimedRow) =>
      buildEntry(
        row,
        resolveTopic,
        (topicArn) => limits.bytesFor(topicArn),
        settings.claimCheckSendWithinHours,
      );
    const ready: ReadyRow[] = [];
    const oversize: ClaimedRow[] = [];
    for (const row of group) {
      if (this.#isHeldBack(row)) {
        this.#release(row);
        continue;
      }
      const built = build(row);
      if (built.kind === "ready") ready.push(readyRow(row, built));
      else if (built.kind === "unsendable") this.#kill(row, built.reason);
      else oversize.push(row);
    }
    if (oversize.length === 0) return ready;

    const topics = [...new Set(oversize.map((row) => resolveTopic(row.topic) ?? ""))];
    const fresh = new Map(
      await Promise.all(
        topics.map(async (topicArn) => [topicArn, await limits.refresh(topicArn, this.#deadline)] as const),
      ),
    );
    for (const row of oversize) {
      const built = build(row);
      if (built.kind === "ready") ready.push(readyRow(row, built));
      else if (built.kind === "oversize" && fresh.get(built.topicArn) === undefined)
        // The limit could not be read: an attempt, not death, so that a passing failure to read a
        // raised limit does not kill the row; one that lasts ends in a dead row after the attempts.
        this.#fail(row, `${built.reason}, which could not be read again`);
      else this.#kill(row, built.reason);
    }
    return ready;
  }

  /**
   * One chunk to its rows' fate: not sent (released, or deferred while its topic backs off), or
   * published, with the published rows marked before it returns (and its capacity is freed), and the
   * answer's other rows failed, deferred or released.
   */
  async #send(chunk: Chunk): Promise<void> {
    const { outage, sns, store, metrics } = this.#relay;
    if (!this.#mayStartRequest()) {
      for (const row of chunk.rows) this.#release(row);
      return;
    }
    // A topic whose requests fail as a whole gets none until its wait is over: its rows go back to
    // wait with it, and the first request after the wait probes whether it is back.
    const waiting = outage.waiting(chunk.topicArn);
    if (waiting.waitMs > 0) {
      for (const row of chunk.rows)
        this.#defer(row, waiting.waitMs, `not sent, topic backing off after: ${waiting.reason}`);
      return;
    }
    const answer = await sns.publish(chunk, this.#deadline);
    if (answer.published.length > 0) {
      this.#published += answer.published.length;
      for (const row of answer.published) metrics.published.inc({ topic: row.topic });
      // The capacity is freed only once the mark has committed: a chunk the bus took but the table
      // does not yet show as published counts as in flight, so a hard kill re-sends at most
      // RELAY_PUBLISH_CONCURRENCY chunks, never a growing tail of unmarked ones.
      await store.markPublished(answer.published.map((row) => row.id)).catch((error: unknown) => {
        this.#markError ??= { error };
      });
    }
    await this.#answered(chunk, answer);
  }

  /**
   * Whether a request may start now. Not after a failed mark of published rows, in this batch or in
   * one streaming beside it: every chunk sent after it would be one more the table does not show as
   * published, to be sent again. And only if it can end before the lease, and before the drain
   * deadline: one cut there may already have reached SNS. Rows released unsent are never duplicates.
   */
  #mayStartRequest(): boolean {
    const finishesBy = performance.now() + this.#relay.settings.publishTimeoutMs;
    return (
      !this.#deadline.aborted &&
      this.#relay.store.failedMarks() === this.#failedMarksBefore &&
      finishesBy <= this.#deadline.expiresAt &&
      finishesBy <= this.#relay.drain.endsAt
    );
  }

  /**
   * The rows the answer did not publish, and what it says of the topic's outage. A refusal as too
   * long is not an outage (SNS answered): the topic's limit changed since it was read (the relay
   * checked every entry against it), so it is read again for the next requests, and each row spends
   * an attempt: it may fit the fresh limit, alone or in a smaller request, and RELAY_MAX_ATTEMPTS
   * ends a row SNS keeps refusing.
   */
  async #answered(chunk: Chunk, answer: ChunkOutcome): Promise<void> {
    const { outage, limits, log } = this.#relay;
    const failure = answer.requestFailure;
    const requestTooLong = failure !== undefined && TOO_LONG.test(failure.reason);
    if (requestTooLong || answer.refused.some(({ reason }) => TOO_LONG.test(reason)))
      await limits.refresh(chunk.topicArn, this.#deadline);
    if (failure && !requestTooLong) {
      const { waitMs, began } = outage.failed(chunk.topicArn, answer.sentAt, failure.reason);
      if (began) {
        log?.warn(
          {
            topicArn: chunk.topicArn,
            kind: failure.kind,
            reason: failure.reason,
            waitMs: Math.round(waitMs),
          },
          "PublishBatch failing as a whole: topic backs off, rows spend no attempts",
        );
      }
      for (const row of answer.unanswered) this.#defer(row, waitMs, failure.reason, "request");
    } else if (answer.abandoned.length === 0) {
      const ended = outage.answered(chunk.topicArn);
      if (ended) log?.info({ topicArn: chunk.topicArn, ...ended }, "PublishBatch answered again");
    }
    if (requestTooLong) {
      for (const row of answer.unanswered)
        this.#fail(row, `SNS refused the request as too long (${failure.reason})`);
    }
    for (const { row, reason } of answer.refused) this.#fail(row, reason);
    for (const row of answer.abandoned) this.#release(row);
  }

  /** Whether a row before this one, of the same key, did not get through in this batch. */
  #isHeldBack(row: ClaimedRow): boolean {
    return row.orderingKey !== null && this.#stoppedKeys.has(row.orderingKey);
  }

  /** SNS refused the row (its entry, or its request as too long): an attempt; dead once they are spent. */
  #fail(row: ClaimedRow, reason: string): void {
    const attempts = row.attempts + 1;
    const isDead = attempts >= this.#relay.settings.maxAttempts;
    this.#failures.push({
      id: row.id,
      delayMs: backoffMs(attempts, this.#relay.settings.backoff),
      error: reason,
      attempt: true,
      dead: isDead,
    });
    if (isDead) this.#dead.push({ row, reason: `after ${attempts} attempts: ${reason}`, cause: "attempts" });
    this.#counted("entry");
    this.#stopKey(row);
  }

  /**
   * The bus is down for the row's topic: it waits `delayMs`, spending no attempt. Counted as a
   * failure (`request`) when its own request failed, not when it was never sent.
   */
  #defer(row: ClaimedRow, delayMs: number, reason: string, failed?: FailureReason): void {
    this.#failures.push({
      id: row.id,
      delayMs: Math.ceil(delayMs),
      error: reason,
      attempt: false,
      dead: false,
    });
    this.#deferred += 1;
    if (failed) this.#counted(failed);
    this.#stopKey(row);
  }

  /**
   * The row cannot be sent (no topic, too large): dead at once. Its key's later rows wait behind it,
   * as behind any dead row (see outbox-store.ts), until an operator requeues it or skips it.
   */
  #kill(row: ClaimedRow, reason: string): void {
    this.#failures.push({ id: row.id, delayMs: 0, error: reason, attempt: true, dead: true });
    this.#dead.push({ row, reason, cause: "unsendable" });
    this.#counted("unsendable");
    this.#stopKey(row);
  }

  /** Not sent, or sent with the outcome unknown: given back without an attempt. */
  #release(row: ClaimedRow): void {
    this.#released.push(row.id);
    this.#stopKey(row);
  }

  #counted(reason: FailureReason): void {
    this.#relay.metrics.failed.inc({ reason });
  }

  #stopKey(row: ClaimedRow): void {
    if (row.orderingKey !== null) this.#stoppedKeys.add(row.orderingKey);
  }
}

function readyRow(
  row: ClaimedRow,
  { topicArn, entry, bytes, limitBytes }: BuiltEntry & { kind: "ready" },
): ReadyRow {
  return { row, topicArn, entry, bytes, limitBytes };
}
