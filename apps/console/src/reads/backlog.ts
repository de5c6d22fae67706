import type { OutboxTables as Database } from "@outbox/client";
import { deadRowsTotal } from "@outbox/relay/operations";
import { type Kysely, sql } from "kysely";

/**
 * The most pending rows the flow reads to count them (and scheduled ones): past it the count is
 * capped, the total the planner's estimate. A count reads every row it counts, so an exact one
 * costs the backlog (0.7 s of database time at 1 M pending rows, 3 s at 4 M); this one costs at
 * most COUNT_CAP index entries, whatever the backlog.
 */
export const COUNT_CAP = 10_000;

/** A count the page shows: exact, at least `value` (capped), or about `value` (the planner's estimate). */
export interface Count {
  readonly value: number;
  readonly kind: "exact" | "at least" | "estimate";
}

export interface TopicBacklog {
  readonly topic: string;
  /** Pending rows: exact under COUNT_CAP in all; past it, those among the COUNT_CAP oldest ("at least"). */
  readonly unsent: Count;
  readonly dead: number;
  /** Ordering keys held by a dead row: their later events wait. */
  readonly blockedKeys: number;
  /** Seconds since its oldest due pending row was due (among the COUNT_CAP oldest); null when none is due. */
  readonly oldestUnsentAgeSeconds: number | null;
}

/** The flow's backlog: per topic, in all, and the scheduled rows. */
export interface Backlog {
  readonly topics: readonly TopicBacklog[];
  readonly total: Omit<TopicBacklog, "topic">;
  readonly scheduled: { readonly events: Count; readonly earliestDueAt: string | null };
  /**
   * The pending rows were more than COUNT_CAP: a topic none of whose pending rows is among the oldest
   * COUNT_CAP (the next the relay sends) is listed for its dead rows only, or not at all.
   */
  readonly capped: boolean;
}

/**
 * The backlog as the flow view shows it, in four statements none of which reads more than `cap`
 * (COUNT_CAP) rows of the backlog: `relay status` (readStatus) counts it exactly, and costs it.
 */
export async function readBacklog(db: Kysely<Database>, cap = COUNT_CAP): Promise<Backlog> {
  // The oldest COUNT_CAP + 1 pending rows by seq, on `outbox_pending_by_seq` (its predicate), read in
  // its order and cut by the LIMIT: the relay's next rows, grouped by topic.
  const pending = await sql<{ topic: string; unsent: string; oldest: number | null }>`
    SELECT topic, count(*) AS unsent,
           extract(epoch FROM now() - min(greatest(created_at, deliver_at))
             FILTER (WHERE deliver_at IS NULL OR deliver_at <= now()))::float8 AS oldest
    FROM (SELECT topic, created_at, deliver_at FROM outbox
          WHERE published_at IS NULL AND dead_at IS NULL
          ORDER BY seq LIMIT ${cap + 1}) oldest
    GROUP BY topic
  `.execute(db);
  // Dead rows are few (an operator decides each): counted exactly on `outbox_dead` (migration 0015).
  const dead = await sql<{ topic: string; dead: string; blocked: string }>`
    SELECT topic, count(*) AS dead, count(DISTINCT ordering_key) FILTER (WHERE skipped_at IS NULL) AS blocked
    FROM outbox
    WHERE dead_at IS NOT NULL AND published_at IS NULL
    GROUP BY topic
  `.execute(db);
  // The scheduled rows on `outbox_scheduled` (migration 0012) in due order: the first is the earliest.
  const scheduled = await sql<{ events: string; earliest: Date | null }>`
    SELECT count(*) AS events, min(deliver_at) AS earliest
    FROM (SELECT deliver_at FROM outbox
          WHERE deliver_at IS NOT NULL AND published_at IS NULL AND dead_at IS NULL AND deliver_at > now()
          ORDER BY deliver_at LIMIT ${cap + 1}) due
  `.execute(db);
  const capped = (count: number): Count =>
    count > cap ? { value: cap, kind: "at least" } : { value: count, kind: "exact" };
  const read = pending.rows.reduce((sum, row) => sum + Number(row.unsent), 0);
  const isCapped = read > cap;
  // Past the cap the total is the pending index's size as VACUUM or ANALYZE last counted it.
  const estimate = isCapped
    ? await sql<{ rows: number }>`
        SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = 'outbox_pending_by_seq'::regclass
      `.execute(db)
    : undefined;
  const byTopic = new Map<string, TopicBacklog>();
  const topicOf = (topic: string): TopicBacklog =>
    byTopic.get(topic) ?? {
      topic,
      unsent: { value: 0, kind: isCapped ? "at least" : "exact" },
      dead: 0,
      blockedKeys: 0,
      oldestUnsentAgeSeconds: null,
    };
  for (const row of pending.rows) {
    byTopic.set(row.topic, {
      ...topicOf(row.topic),
      unsent: isCapped ? { value: Number(row.unsent), kind: "at least" } : capped(Number(row.unsent)),
      oldestUnsentAgeSeconds: row.oldest === null ? null : Math.round(row.oldest * 1_000) / 1_000,
    });
  }
  for (const row of dead.rows) {
    byTopic.set(row.topic, {
      ...topicOf(row.topic),
      dead: Number(row.dead),
      blockedKeys: Number(row.blocked),
    });
  }
  const topics = [...byTopic.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  const estimated = Math.round(estimate?.rows[0]?.rows ?? 0);
  const total = {
    unsent: isCapped
      ? estimated > cap
        ? { value: estimated, kind: "estimate" as const }
        : { value: cap, kind: "at least" as const }
      : { value: read, kind: "exact" as const },
    ...deadRowsTotal(topics),
  };
  return {
    topics,
    total,
    scheduled: {
      events: capped(Number(scheduled.rows[0]?.events ?? 0)),
      earliestDueAt: scheduled.rows[0]?.earliest?.toISOString() ?? null,
    },
    capped: isCapped,
  };
}
