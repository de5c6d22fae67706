import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";
import { holdsItsKey } from "./dead-heads.js";
import { notDueYet } from "./scheduled-rows.js";

/**
 * Every statement the relay's loop runs on outbox rows: claim, markPublished, recordFailures, release,
 * countUnsent and msUntilNextDue. A row's lease (`locked_by`, `locked_until`) is taken by the claim and
 * given up by exactly one of the others. The operator commands' statements are theirs (cli/), the
 * retention's its own (retention.ts).
 */

/** A row this relay holds a lease on, with what publishing it needs. */
export interface ClaimedRow {
  readonly id: string;
  /** bigint as text: seq values may exceed 2^53. */
  readonly seq: string;
  readonly topic: string;
  readonly orderingKey: string | null;
  readonly eventType: string;
  /** The payload's JSON text exactly as enqueued (a `json` column keeps it verbatim): the SNS message. */
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Failed attempts so far (before this one). */
  readonly attempts: number;
  readonly createdAt: Date;
}

/** An outbox row as the claim's RETURNING (and republish's read) selects it, before `claimedRow`. */
export interface RawOutboxRow {
  id: string;
  seq: string;
  topic: string;
  ordering_key: string | null;
  event_type: string;
  payload: string;
  headers: Record<string, string>;
  attempts: number;
  created_at: Date;
}

/**
 * Claims up to `limit` rows in one statement and leases them to `relayId` for `leaseMs`.
 *
 * Why each part is there:
 * - `candidates` walks the partial index `outbox_pending_by_seq` (only unpublished, non-dead rows) in
 *   seq order, so the oldest work goes first and published history costs nothing. `available_at` keeps
 *   rows in backoff out; an expired lease (`locked_until < now()`) is free again, so a crashed relay's
 *   rows come back on their own.
 * - The per-key head check keeps a blocked key from being claimed at all: a key is blocked while its
 *   oldest pending row waits in backoff or is leased by a live relay. Without it, a failing key's later
 *   rows would fill every batch (and be released again), starving the other keys. Only the head is
 *   probed (one lookup in `outbox_pending_by_key`): a relay only ever leases a prefix of a key's rows,
 *   and a failed row keeps its successors from being attempted, so the head decides.
 *   A delayed event (`enqueue`'s `deliverAt` / `delayMs` set its `available_at` to its due time) is
 *   such a head until it is due: its key's later events wait behind it, due or not.
 * - A dead row blocks its key too, until an operator requeues it (`relay requeue-dead`) or skips it
 *   (`relay skip-dead`, `skipped_at`): its key's later events must not overtake it, which they did when
 *   dead rows were simply left out (a long SNS outage then reordered every key). The pending head
 *   probe cannot see it (`outbox_pending_by_key` holds no dead rows, and keeps the claim's hot path
 *   narrow), so a second probe asks `outbox_dead_heads` (migration 0010), which holds only dead,
 *   unskipped keyed rows: normally empty, one lookup per keyed candidate. It is a scalar subquery with
 *   LIMIT 1, not a NOT EXISTS: inside the OR, Postgres may plan a NOT EXISTS as a hashed SubPlan, built
 *   once per claim by a sequential scan of the whole outbox (published history included): 94 000 pages
 *   per claim with a million rows retained. A correlated LIMIT subquery can only run per candidate,
 *   through the index (apps/relay/test/claim-plan.test.ts).
 * - `FOR UPDATE SKIP LOCKED` lets several replicas claim side by side without waiting on each other.
 * - `keys.blocked_from` closes the race SKIP LOCKED opens: a concurrent claimer may hold the row-lock of
 *   an earlier row of the same key, invisible to our snapshot as a lease. So a keyed row is claimed only
 *   if no earlier pending row of its key exists outside this claim; the first such row, per key, is
 *   found by walking the key's pending rows in seq order and skipping the ones we locked (hashed NOT IN).
 *   Locked rows that fail this test are simply not updated; their row-locks end with the statement.
 * - The shape is chosen so that no plan can be quadratic in the batch size, whatever the statistics say
 *   (a never-analyzed table, or one analyzed while the whole backlog was pending): `keys` is
 *   MATERIALIZED, so the per-key probe runs once per key and never again on a rescan, each key's rows
 *   travel as arrays instead of being joined back to `candidates`, and the UPDATE finds its rows by
 *   primary key through `= ANY(array)`, which is an index lookup however many rows the planner expects.
 *   (Inlined, the old `blocked_from` join was re-evaluated once per candidate under a nested loop:
 *   batch² index probes, which grew a 2 000 events/s backlog into multi-second stalls.)
 * - The lease is set in the same statement, so a claim is atomic without an explicit transaction.
 * - `payload::text` hands back the stored JSON text: it is the SNS message as it is, with no parse and
 *   re-serialise in the relay. The column is `json` (migration 0006), which keeps the text the caller
 *   enqueued byte for byte; `jsonb` would hand back its own rendering (spaces added, keys re-sorted),
 *   neither what the caller wrote nor the size `enqueue` checked.
 */
export async function claimBatch(
  db: Kysely<Database>,
  relayId: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedRow[]> {
  const { rows } = await sql<RawOutboxRow>`
    WITH candidates AS (
      SELECT o.id, o.seq, o.ordering_key
      FROM outbox o
      WHERE o.published_at IS NULL AND o.dead_at IS NULL
        AND o.available_at <= now()
        AND (o.locked_until IS NULL OR o.locked_until < now())
        AND (o.ordering_key IS NULL OR (NOT EXISTS (
          SELECT 1 FROM (
            SELECT h.available_at, h.locked_until
            FROM outbox h
            WHERE h.ordering_key = o.ordering_key AND h.published_at IS NULL AND h.dead_at IS NULL
            ORDER BY h.seq
            LIMIT 1
          ) head
          WHERE head.available_at > now() OR head.locked_until >= now()
        ) AND (
          SELECT true FROM outbox d
          WHERE d.ordering_key = o.ordering_key
            AND ${holdsItsKey("d")}
          LIMIT 1
        ) IS NULL))
      ORDER BY o.seq
      LIMIT ${limit}
      FOR UPDATE OF o SKIP LOCKED
    ),
    keys AS MATERIALIZED (
      SELECT k.ids, k.seqs, (
        SELECT e.seq
        FROM outbox e
        WHERE e.ordering_key = k.ordering_key AND e.published_at IS NULL AND e.dead_at IS NULL
          AND e.seq NOT IN (SELECT c.seq FROM candidates c)
        ORDER BY e.seq
        LIMIT 1
      ) AS blocked_from
      FROM (
        SELECT c.ordering_key, array_agg(c.id) AS ids, array_agg(c.seq) AS seqs
        FROM candidates c
        WHERE c.ordering_key IS NOT NULL
        GROUP BY c.ordering_key
      ) k
    ),
    claimable AS (
      SELECT c.id FROM candidates c WHERE c.ordering_key IS NULL
      UNION ALL
      SELECT r.id
      FROM keys k, unnest(k.ids, k.seqs) AS r(id, seq)
      WHERE k.blocked_from IS NULL OR r.seq < k.blocked_from
    )
    UPDATE outbox o
    SET locked_until = now() + ${leaseMs} * interval '1 millisecond', locked_by = ${relayId}
    WHERE o.id = ANY((SELECT array_agg(claimable.id) FROM claimable)::uuid[])
    RETURNING o.id, o.seq, o.topic, o.ordering_key, o.event_type, o.payload::text AS payload, o.headers,
              o.attempts, o.created_at
  `.execute(db);
  return rows.map(claimedRow).sort(bySeq);
}

/** The row in the relay's own names. */
export function claimedRow(raw: RawOutboxRow): ClaimedRow {
  return {
    id: raw.id,
    seq: raw.seq,
    topic: raw.topic,
    orderingKey: raw.ordering_key,
    eventType: raw.event_type,
    payload: raw.payload,
    headers: raw.headers,
    attempts: raw.attempts,
    createdAt: raw.created_at,
  };
}

/**
 * UPDATE … RETURNING has no order: restore seq order. seq is a positive bigint in canonical decimal
 * (no sign, no leading zeros), so the shorter text is the smaller number and equal lengths compare as
 * text — numeric order without a BigInt per comparison.
 */
function bySeq(a: ClaimedRow, b: ClaimedRow): number {
  if (a.seq.length !== b.seq.length) return a.seq.length - b.seq.length;
  return a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0;
}

/**
 * A row whose publish failed: retried after `delayMs`, or dead when `dead`. `attempt` says whether it
 * counts toward RELAY_MAX_ATTEMPTS: only a failure that is the row's own (SNS refused its entry, or it
 * cannot be sent) does; a request that failed as a whole (SNS down) only makes it wait.
 */
export interface RowFailure {
  readonly id: string;
  readonly delayMs: number;
  readonly error: string;
  readonly attempt: boolean;
  readonly dead: boolean;
}

/**
 * Marks rows published and frees their lease. Not guarded by `locked_by`: the rows did reach the bus,
 * so recording it is right even if our lease ran out meanwhile.
 */
export async function markPublished(db: Kysely<Database>, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    UPDATE outbox SET published_at = now(), locked_until = NULL, locked_by = NULL
    WHERE id = ANY(${ids}::uuid[]) AND published_at IS NULL
  `.execute(db);
}

/**
 * Records failures: an attempt or a mere wait, backoff or death, and the reason. Guarded by `locked_by`
 * so a relay whose lease expired cannot reschedule a row another relay has claimed since.
 */
async function recordFailures(
  db: Kysely<Database>,
  relayId: string,
  failures: readonly RowFailure[],
): Promise<void> {
  if (failures.length === 0) return;
  await sql`
    UPDATE outbox o
    SET attempts = o.attempts + CASE WHEN f.attempt THEN 1 ELSE 0 END,
        available_at = now() + f.delay_ms * interval '1 millisecond',
        last_error = f.error,
        dead_at = CASE WHEN f.dead THEN now() END,
        locked_until = NULL,
        locked_by = NULL
    FROM unnest(
      ${failures.map((f) => f.id)}::uuid[],
      ${failures.map((f) => f.delayMs)}::integer[],
      ${failures.map((f) => f.error)}::text[],
      ${failures.map((f) => f.attempt)}::boolean[],
      ${failures.map((f) => f.dead)}::boolean[]
    ) AS f(id, delay_ms, error, attempt, dead)
    WHERE o.id = f.id AND o.locked_by = ${relayId} AND o.published_at IS NULL
  `.execute(db);
}

/**
 * Releases rows: gives them back without counting an attempt (not sent, or sent with the outcome
 * unknown after an abort). `locked_until = NULL` makes them claimable at once by any relay, instead of
 * after the lease. Guarded by `locked_by` as recordFailures is.
 */
async function release(db: Kysely<Database>, relayId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    UPDATE outbox SET locked_until = NULL, locked_by = NULL
    WHERE id = ANY(${ids}::uuid[]) AND locked_by = ${relayId} AND published_at IS NULL
  `.execute(db);
}

/**
 * Milliseconds from now until the earliest scheduled row is due, on the database's clock (the one the
 * claim compares `available_at` with); undefined when nothing is scheduled. One probe of
 * `outbox_scheduled`: min() over an index range is its first entry — the plan is
 * `Limit -> Index Only Scan using outbox_scheduled, Index Cond: (deliver_at > now())`
 * (apps/relay/test/delayed-events.test.ts checks it). Rounded up, so a timer set to it does not fire
 * before the row is due.
 */
async function msUntilNextDue(db: Kysely<Database>): Promise<number | undefined> {
  const { rows } = await sql<{ ms: number | null }>`
    SELECT ceil(extract(epoch FROM min(o.deliver_at) - now()) * 1000)::float8 AS ms
    FROM outbox o
    WHERE ${notDueYet("o")}
  `.execute(db);
  return rows[0]?.ms ?? undefined;
}

/**
 * Rows neither published nor dead, all relays' (the `drained` line's `unsent`). A plain count: it runs
 * once, at the end of a drain, when the whole backlog's size is the answer wanted.
 */
async function countUnsent(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ unsent: string }>`
    SELECT count(*) AS unsent FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
  `.execute(db);
  return Number(rows[0]?.unsent ?? -1);
}

/** The statements above, bound to one relay (its `locked_by`, batch size and lease). */
export interface OutboxStore {
  /** Claims the next batch, leasing its rows to this relay (claimBatch). */
  claim(): Promise<ClaimedRow[]>;
  /**
   * Marks rows published, in one UPDATE with the other marks asked for in the same turn (group
   * commit, below). Rejects when that UPDATE failed.
   */
  markPublished(ids: readonly string[]): Promise<void>;
  /**
   * Marks of published rows that failed so far, in any batch: a batch sends nothing more once one
   * failed after it started, since the database may not record what it sends next either.
   */
  failedMarks(): number;
  recordFailures(failures: readonly RowFailure[]): Promise<void>;
  release(ids: readonly string[]): Promise<void>;
  countUnsent(): Promise<number>;
  msUntilNextDue(): Promise<number | undefined>;
}

/**
 * The relay's store. Its `markPublished` is a group commit: each chunk asks to be marked as soon as
 * its response arrives, and the chunks answered in the same turn of the event loop are marked
 * together by one UPDATE, sent after `setImmediate` (responses that arrived together are all handled
 * by then). The UPDATEs overlap: one asked for while another runs is sent at once instead of queueing
 * behind it. A chunk's publish capacity is held until its mark commits, so a mark waiting for
 * another's round trip kept capacity idle (issue #29: 9–25 ms a mark against a 20 ms PublishBatch);
 * the rows of two chunks are never the same, so the UPDATEs cannot wait on each other's locks, and
 * the capacity bounds how many run at once.
 */
export function outboxStore(
  db: Kysely<Database>,
  claims: { readonly relayId: string; readonly batchSize: number; readonly leaseMs: number },
): OutboxStore {
  const { relayId } = claims;
  let queued: string[] = [];
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  let scheduled = false;
  let failedMarks = 0;
  const flush = async () => {
    scheduled = false;
    const ids = queued;
    const waiters = waiting;
    queued = [];
    waiting = [];
    try {
      await markPublished(db, ids);
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      failedMarks += 1;
      for (const waiter of waiters) waiter.reject(error);
    }
  };
  return {
    claim: () => claimBatch(db, relayId, claims.batchSize, claims.leaseMs),
    markPublished: (ids) =>
      new Promise<void>((resolve, reject) => {
        queued.push(...ids);
        waiting.push({ resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => void flush());
        }
      }),
    failedMarks: () => failedMarks,
    recordFailures: (failures) => recordFailures(db, relayId, failures),
    release: (ids) => release(db, relayId, ids),
    countUnsent: () => countUnsent(db),
    msUntilNextDue: () => msUntilNextDue(db),
  };
}
