import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";
import { holdsItsKey } from "./dead-heads.js";

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
