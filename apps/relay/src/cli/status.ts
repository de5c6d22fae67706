import { EXIT_CONFIG, EXIT_OK } from "@outbox/shared";
import { sql } from "kysely";
import { holdsItsKey } from "../dead-heads.js";
import { openDatabase } from "./open-database.js";

export interface TopicStatus {
  readonly topic: string;
  readonly unsent: number;
  readonly dead: number;
  /** Ordering keys held by a dead row: their later events wait. */
  readonly blockedKeys: number;
  /** Seconds since the oldest unsent row was created; null when nothing is unsent. */
  readonly oldestUnsentAgeSeconds: number | null;
}

/** A key held by a dead row, with what an operator needs to decide (`requeue-dead` or `skip-dead --id`). */
export interface BlockedKey {
  readonly topic: string;
  readonly orderingKey: string;
  /** The dead row holding it. */
  readonly eventId: string;
  readonly lastError: string | null;
  /** Unsent events of the key waiting behind it. */
  readonly waiting: number;
}

/** Blocked keys listed one by one; the count per topic covers them all. */
const BLOCKED_KEYS_LISTED = 20;

/** `relay status [--json]`: the backlog per topic, as tables for people or JSON for scripts. */
export async function runStatus(options: { readonly json: boolean }): Promise<number> {
  const database = await openDatabase("status");
  if (!database) return EXIT_CONFIG;
  try {
    // Dead rows are never published, so `published_at IS NULL` covers every count; a dead row blocks
    // its key until it is requeued or skipped (claim-batch.ts).
    const { rows } = await sql<{
      topic: string;
      unsent: string;
      dead: string;
      blocked: string;
      oldest: number | null;
    }>`
      SELECT topic,
             count(*) FILTER (WHERE dead_at IS NULL) AS unsent,
             count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead,
             count(DISTINCT ordering_key) FILTER (WHERE dead_at IS NOT NULL AND skipped_at IS NULL) AS blocked,
             extract(epoch FROM now() - min(created_at) FILTER (WHERE dead_at IS NULL))::float8 AS oldest
      FROM outbox
      WHERE published_at IS NULL
      GROUP BY topic
      ORDER BY topic
    `.execute(database.db);
    // The oldest dead row of each blocked key (`outbox_dead_heads`), and how many wait behind it.
    const blocked = await sql<{
      topic: string;
      ordering_key: string;
      id: string;
      last_error: string | null;
      waiting: string;
    }>`
      SELECT DISTINCT ON (d.ordering_key) d.topic, d.ordering_key, d.id, d.last_error,
             (SELECT count(*) FROM outbox w
              WHERE w.ordering_key = d.ordering_key AND w.published_at IS NULL AND w.dead_at IS NULL) AS waiting
      FROM outbox d
      WHERE ${holdsItsKey("d")}
        AND d.ordering_key IS NOT NULL
      ORDER BY d.ordering_key, d.seq
      LIMIT ${BLOCKED_KEYS_LISTED}
    `.execute(database.db);
    const topics: TopicStatus[] = rows.map((row) => ({
      topic: row.topic,
      unsent: Number(row.unsent),
      dead: Number(row.dead),
      blockedKeys: Number(row.blocked),
      oldestUnsentAgeSeconds: row.oldest === null ? null : Math.round(row.oldest * 1_000) / 1_000,
    }));
    const blockedKeys: BlockedKey[] = blocked.rows.map((row) => ({
      topic: row.topic,
      orderingKey: row.ordering_key,
      eventId: row.id,
      lastError: row.last_error,
      waiting: Number(row.waiting),
    }));
    const total = {
      unsent: topics.reduce((sum, topic) => sum + topic.unsent, 0),
      dead: topics.reduce((sum, topic) => sum + topic.dead, 0),
      blockedKeys: topics.reduce((sum, topic) => sum + topic.blockedKeys, 0),
      oldestUnsentAgeSeconds: topics.reduce<number | null>(
        (oldest, topic) =>
          topic.oldestUnsentAgeSeconds === null
            ? oldest
            : Math.max(oldest ?? 0, topic.oldestUnsentAgeSeconds),
        null,
      ),
    };
    process.stdout.write(
      options.json
        ? `${JSON.stringify({ total, topics, blockedKeys })}\n`
        : renderTables(topics, total, blockedKeys),
    );
    return EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}

function renderTables(
  topics: readonly TopicStatus[],
  total: Omit<TopicStatus, "topic">,
  blockedKeys: readonly BlockedKey[],
): string {
  const age = (seconds: number | null) => (seconds === null ? "—" : `${seconds.toFixed(1)} s`);
  const backlog = renderTable(
    [
      ["TOPIC", "UNSENT", "DEAD", "BLOCKED KEYS", "OLDEST UNSENT"],
      ...[...topics, { topic: "(all)", ...total }].map((topic) => [
        topic.topic,
        String(topic.unsent),
        String(topic.dead),
        String(topic.blockedKeys),
        age(topic.oldestUnsentAgeSeconds),
      ]),
    ],
    new Set([1, 2, 3, 4]),
  );
  if (blockedKeys.length === 0) return backlog;
  const listed =
    total.blockedKeys > blockedKeys.length
      ? `(the first ${blockedKeys.length} of ${total.blockedKeys} blocked keys)\n`
      : "";
  return `${backlog}\n${renderTable(
    [
      ["BLOCKED KEY", "TOPIC", "DEAD EVENT", "WAITING", "LAST ERROR"],
      ...blockedKeys.map((key) => [
        key.orderingKey,
        key.topic,
        key.eventId,
        String(key.waiting),
        (key.lastError ?? "").slice(0, 80),
      ]),
    ],
    new Set([3]),
  )}${listed}`;
}

/** Columns padded to their widest cell: numbers (`numeric` columns) right-aligned, text left-aligned. */
function renderTable(rows: readonly string[][], numeric: ReadonlySet<number>): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return `${rows
    .map((row) =>
      row
        .map((cell, column) =>
          numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}
