import { EXIT_CONFIG, EXIT_OK } from "@outbox/shared";
import { sql } from "kysely";
import { openDatabase } from "./open-database.js";

export interface TopicStatus {
  readonly topic: string;
  readonly unsent: number;
  readonly dead: number;
  /** Seconds since the oldest unsent row was created; null when nothing is unsent. */
  readonly oldestUnsentAgeSeconds: number | null;
}

/** `relay status [--json]`: the backlog per topic, as a table for people or JSON for scripts. */
export async function runStatus(options: { readonly json: boolean }): Promise<number> {
  const database = await openDatabase("status");
  if (!database) return EXIT_CONFIG;
  try {
    // Dead rows are never published, so `published_at IS NULL` covers both counts.
    const { rows } = await sql<{ topic: string; unsent: string; dead: string; oldest: number | null }>`
      SELECT topic,
             count(*) FILTER (WHERE dead_at IS NULL) AS unsent,
             count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead,
             extract(epoch FROM now() - min(created_at) FILTER (WHERE dead_at IS NULL))::float8 AS oldest
      FROM outbox
      WHERE published_at IS NULL
      GROUP BY topic
      ORDER BY topic
    `.execute(database.db);
    const topics: TopicStatus[] = rows.map((row) => ({
      topic: row.topic,
      unsent: Number(row.unsent),
      dead: Number(row.dead),
      oldestUnsentAgeSeconds: row.oldest === null ? null : Math.round(row.oldest * 1_000) / 1_000,
    }));
    const total = {
      unsent: topics.reduce((sum, topic) => sum + topic.unsent, 0),
      dead: topics.reduce((sum, topic) => sum + topic.dead, 0),
      oldestUnsentAgeSeconds: topics.reduce<number | null>(
        (oldest, topic) =>
          topic.oldestUnsentAgeSeconds === null
            ? oldest
            : Math.max(oldest ?? 0, topic.oldestUnsentAgeSeconds),
        null,
      ),
    };
    process.stdout.write(
      options.json ? `${JSON.stringify({ total, topics })}\n` : renderTable(topics, total),
    );
    return EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}

function renderTable(topics: readonly TopicStatus[], total: Omit<TopicStatus, "topic">): string {
  const age = (seconds: number | null) => (seconds === null ? "—" : `${seconds.toFixed(1)} s`);
  const rows = [
    ["TOPIC", "UNSENT", "DEAD", "OLDEST UNSENT"],
    ...topics.map((topic) => [
      topic.topic,
      String(topic.unsent),
      String(topic.dead),
      age(topic.oldestUnsentAgeSeconds),
    ]),
    ["(all)", String(total.unsent), String(total.dead), age(total.oldestUnsentAgeSeconds)],
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return `${rows
    .map((row) =>
      row
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
        )
        .join("  "),
    )
    .join("\n")}\n`;
}
