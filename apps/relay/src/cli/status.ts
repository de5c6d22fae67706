import type { OutboxTables as Database } from "@outbox/client";
import { EXIT_CONFIG, EXIT_OK, forTerminal, renderTable } from "@outbox/shared";
import { type Kysely, sql } from "kysely";
import { holdsItsKey } from "../dead-heads.js";
import { notDueYet } from "../scheduled-rows.js";
import { openDatabase } from "./open-database.js";

export interface TopicStatus {
  readonly topic: string;
  readonly unsent: number;
  readonly dead: number;
  /** Ordering keys held by a dead row: their later events wait. */
  readonly blockedKeys: number;
  /**
   * Seconds since the oldest unsent row was due (created, or its scheduled time if later); null when
   * no unsent row is due: a scheduled row is not late before its time.
   */
  readonly oldestUnsentAgeSeconds: number | null;
}

/**
 * A key held by a dead row, with what an operator needs to decide (`requeue-dead` or `skip-dead --id`,
 * the console's buttons).
 */
export interface BlockedKey {
  readonly topic: string;
  readonly orderingKey: string;
  /** The dead row holding it (the key's oldest dead row). */
  readonly eventId: string;
  readonly eventType: string;
  readonly lastError: string | null;
  readonly attempts: number;
  /** Seconds since the head died. */
  readonly deadSeconds: number;
  /** Unsent events of the key waiting behind it. */
  readonly waiting: number;
}

/** Events scheduled and not due yet (`enqueue`'s `deliverAt` / `delayMs`), all topics. */
export interface ScheduledStatus {
  readonly events: number;
  /** ISO time the earliest of them is due (the database's clock); null when none is scheduled. */
  readonly earliestDueAt: string | null;
}

/** Blocked keys `relay status` lists one by one; the count per topic covers them all. */
const BLOCKED_KEYS_LISTED = 20;

/** The backlog `relay status` reports and the operator console's flow view shows. */
export interface RelayStatus {
  readonly topics: readonly TopicStatus[];
  readonly total: Omit<TopicStatus, "topic">;
  readonly scheduled: ScheduledStatus;
}

/** The backlog per topic and the scheduled rows, read in two statements. */
export async function readStatus(db: Kysely<Database>): Promise<RelayStatus> {
  // Dead rows are never published, so the unsent rows are the pending ones and the dead ones; a dead
  // row blocks its key until it is requeued or skipped (outbox-store.ts). Two parts, each stated as
  // its partial index's predicate: the pending rows on `outbox_pending_by_seq`, the dead ones on
  // `outbox_dead` (migration 0015). As one `WHERE published_at IS NULL`, which no index has alone,
  // the query read the whole outbox, published history included.
  const { rows } = await sql<{
    topic: string;
    unsent: string;
    dead: string;
    blocked: string;
    oldest: number | null;
  }>`
    SELECT topic, sum(unsent) AS unsent, sum(dead) AS dead, sum(blocked) AS blocked, min(oldest) AS oldest
    FROM (
      SELECT topic, count(*) AS unsent, 0 AS dead, 0 AS blocked,
             extract(epoch FROM now() - min(greatest(created_at, deliver_at))
               FILTER (WHERE deliver_at IS NULL OR deliver_at <= now()))::float8 AS oldest
      FROM outbox
      WHERE published_at IS NULL AND dead_at IS NULL
      GROUP BY topic
      UNION ALL
      SELECT topic, 0, count(*), count(DISTINCT ordering_key) FILTER (WHERE skipped_at IS NULL), NULL
      FROM outbox
      WHERE dead_at IS NOT NULL AND published_at IS NULL
      GROUP BY topic
    ) parts
    GROUP BY topic
    ORDER BY topic
  `.execute(db);
  // A range scan of `outbox_scheduled` (migration 0012), which holds only scheduled pending rows.
  const scheduledRows = await sql<{ events: string; earliest: Date | null }>`
    SELECT count(*) AS events, min(o.deliver_at) AS earliest FROM outbox o WHERE ${notDueYet("o")}
  `.execute(db);
  const scheduled: ScheduledStatus = {
    events: Number(scheduledRows.rows[0]?.events ?? 0),
    earliestDueAt: scheduledRows.rows[0]?.earliest?.toISOString() ?? null,
  };
  const topics: TopicStatus[] = rows.map((row) => ({
    topic: row.topic,
    unsent: Number(row.unsent),
    dead: Number(row.dead),
    blockedKeys: Number(row.blocked),
    oldestUnsentAgeSeconds: row.oldest === null ? null : Math.round(row.oldest * 1_000) / 1_000,
  }));
  const total = { unsent: topics.reduce((sum, topic) => sum + topic.unsent, 0), ...deadRowsTotal(topics) };
  return { topics, total, scheduled };
}

/** The topics' dead rows and blocked keys added up, and the oldest unsent age of them all (null when none waits). */
export function deadRowsTotal(
  topics: readonly Pick<TopicStatus, "dead" | "blockedKeys" | "oldestUnsentAgeSeconds">[],
): Pick<TopicStatus, "dead" | "blockedKeys" | "oldestUnsentAgeSeconds"> {
  return {
    dead: topics.reduce((sum, topic) => sum + topic.dead, 0),
    blockedKeys: topics.reduce((sum, topic) => sum + topic.blockedKeys, 0),
    oldestUnsentAgeSeconds: topics.reduce<number | null>(
      (oldest, topic) =>
        topic.oldestUnsentAgeSeconds === null ? oldest : Math.max(oldest ?? 0, topic.oldestUnsentAgeSeconds),
      null,
    ),
  };
}

/**
 * The heads of the blocked keys, held longest first, at most `limit`, and how many keys are blocked.
 * The heads come from `outbox_dead_heads` (migration 0010, its predicate stated by holdsItsKey), each
 * key's waiting count from `outbox_pending_by_key` (one range of the key), and only for the heads
 * listed: the read costs the blocked keys, never the backlog. `heads` is read once (a CTE named
 * twice is computed once) for both the list and the count.
 */
export async function readBlockedKeys(
  db: Kysely<Database>,
  limit: number,
): Promise<{ readonly keys: readonly BlockedKey[]; readonly blocked: number }> {
  const { rows } = await sql<{
    ordering_key: string;
    topic: string;
    id: string;
    event_type: string;
    last_error: string | null;
    attempts: number;
    dead: number;
    waiting: string;
    blocked: string;
  }>`
    WITH heads AS (
      SELECT DISTINCT ON (d.ordering_key) d.ordering_key, d.topic, d.id, d.event_type, d.last_error,
             d.attempts, d.dead_at
      FROM outbox d
      WHERE ${holdsItsKey("d")} AND d.ordering_key IS NOT NULL
      ORDER BY d.ordering_key, d.seq
    )
    SELECT h.ordering_key, h.topic, h.id, h.event_type, h.last_error, h.attempts,
           extract(epoch FROM now() - h.dead_at)::float8 AS dead,
           (SELECT count(*) FROM outbox w
            WHERE w.ordering_key = h.ordering_key AND w.published_at IS NULL AND w.dead_at IS NULL) AS waiting,
           (SELECT count(*) FROM heads) AS blocked
    FROM (SELECT * FROM heads ORDER BY dead_at, ordering_key LIMIT ${limit}) h
    ORDER BY h.dead_at, h.ordering_key
  `.execute(db);
  const keys = rows.map((row) => ({
    topic: row.topic,
    orderingKey: row.ordering_key,
    eventId: row.id,
    eventType: row.event_type,
    lastError: row.last_error,
    attempts: row.attempts,
    deadSeconds: Math.max(0, Math.round(row.dead)),
    waiting: Number(row.waiting),
  }));
  return { keys, blocked: Number(rows[0]?.blocked ?? 0) };
}

/** `relay status [--json]`: the backlog per topic, as tables for people or JSON for scripts. */
export async function runStatus(options: { readonly json: boolean }): Promise<number> {
  const database = await openDatabase("status");
  if (!database) return EXIT_CONFIG;
  try {
    const { topics, total, scheduled } = await readStatus(database.db);
    const { keys } = await readBlockedKeys(database.db, BLOCKED_KEYS_LISTED);
    // The documented JSON fields of a blocked key; the console shows more of them.
    const blockedKeys = keys.map(({ topic, orderingKey, eventId, lastError, waiting }) => ({
      topic,
      orderingKey,
      eventId,
      lastError,
      waiting,
    }));
    process.stdout.write(
      options.json
        ? `${JSON.stringify(jsonShown(total, topics, scheduled, blockedKeys))}\n`
        : renderTables(topics, total, scheduled, blockedKeys),
    );
    return EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}

/** The most characters of a topic, a key or an id a table row shows. */
const TEXT_SHOWN = 60;
/** The most characters of a text `--json` shows, as `consumer dlq list --json` (SHOWN_CHARS there). */
const JSON_SHOWN = 1_000;

/**
 * `--json`'s object: its texts are a producer's or the bus's, escaped and capped (forTerminal) as in
 * the tables, since JSON.stringify leaves C1 controls (U+009B is CSI) and bidi overrides raw.
 */
function jsonShown(
  total: Omit<TopicStatus, "topic">,
  topics: readonly TopicStatus[],
  scheduled: ScheduledStatus,
  blockedKeys: readonly Pick<BlockedKey, "topic" | "orderingKey" | "eventId" | "lastError" | "waiting">[],
): object {
  const shown = (text: string) => forTerminal(text, JSON_SHOWN);
  return {
    total,
    topics: topics.map((topic) => ({ ...topic, topic: shown(topic.topic) })),
    scheduled,
    blockedKeys: blockedKeys.map((key) => ({
      ...key,
      topic: shown(key.topic),
      orderingKey: shown(key.orderingKey),
      lastError: key.lastError === null ? null : shown(key.lastError),
    })),
  };
}
/** The most characters of a dead row's last error a table row shows. */
const ERROR_SHOWN = 80;

/** Every text in the tables is a producer's or the bus's: escaped and capped (forTerminal). */
function renderTables(
  topics: readonly TopicStatus[],
  total: Omit<TopicStatus, "topic">,
  scheduled: ScheduledStatus,
  blockedKeys: readonly Pick<BlockedKey, "topic" | "orderingKey" | "eventId" | "lastError" | "waiting">[],
): string {
  const age = (seconds: number | null) => (seconds === null ? "—" : `${seconds.toFixed(1)} s`);
  const backlog = renderTable(
    [
      ["TOPIC", "UNSENT", "DEAD", "BLOCKED KEYS", "OLDEST UNSENT"],
      ...[...topics, { topic: "(all)", ...total }].map((topic) => [
        forTerminal(topic.topic, TEXT_SHOWN),
        String(topic.unsent),
        String(topic.dead),
        String(topic.blockedKeys),
        age(topic.oldestUnsentAgeSeconds),
      ]),
    ],
    new Set([1, 2, 3, 4]),
  );
  const due = scheduled.earliestDueAt === null ? "" : `, the earliest due at ${scheduled.earliestDueAt}`;
  const schedule = `\nscheduled, not due yet: ${scheduled.events}${due}\n`;
  if (blockedKeys.length === 0) return `${backlog}${schedule}`;
  const listed =
    total.blockedKeys > blockedKeys.length
      ? `(the first ${blockedKeys.length} of ${total.blockedKeys} blocked keys)\n`
      : "";
  return `${backlog}${schedule}\n${renderTable(
    [
      ["BLOCKED KEY", "TOPIC", "DEAD EVENT", "WAITING", "LAST ERROR"],
      ...blockedKeys.map((key) => [
        forTerminal(key.orderingKey, TEXT_SHOWN),
        forTerminal(key.topic, TEXT_SHOWN),
        forTerminal(key.eventId, TEXT_SHOWN),
        String(key.waiting),
        forTerminal(key.lastError ?? "", ERROR_SHOWN),
      ]),
    ],
    new Set([3]),
  )}${listed}`;
}
