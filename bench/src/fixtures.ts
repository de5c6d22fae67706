/**
 * Databases, backlogs and queues the benchmarks start from. Shared by `pnpm bench` and the probes
 * in bench/tools, so every figure starts from the same data (the peers' own set-up is in
 * pto-fixtures.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  EVENT_ID_ATTRIBUTE,
  EVENT_TYPE_ATTRIBUTE,
  enqueue,
  migrateToLatest,
  type NewEvent,
} from "@outbox/client";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import { createDatabaseOn } from "@outbox/devstack";
import { createDatabase, type DatabaseHandle, migrateExampleTables } from "@outbox/shared";
import { sql } from "kysely";
import pg from "pg";

export const KEYS = 1_000;
export const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
export const BODY = "x".repeat(200);

/** One benchmark event: ~250 bytes of payload, one of KEYS ordering keys, a traceparent header. */
export function benchEvent(n: number): NewEvent {
  return {
    topic: "bench",
    eventType: "bench.happened",
    payload: { n, body: BODY },
    orderingKey: `key-${n % KEYS}`,
    headers: { traceparent: TRACEPARENT },
  };
}

/** Creates an empty database on the server behind `adminUrl`; returns its URL. */
export async function createEmptyDatabase(adminUrl: string, prefix = "bench"): Promise<string> {
  return createDatabaseOn(adminUrl, `${prefix}_${randomBytes(4).toString("hex")}`);
}

/** Drops a database made by `createEmptyDatabase` (and any replication slot on it). */
export async function dropDatabase(adminUrl: string, url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(
      "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active",
      [name],
    );
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } catch {
    // best effort: the server goes away with the stack anyway
  } finally {
    await admin.end();
  }
}

export function openDatabase(url: string, service = "bench-setup", poolMax = 4): DatabaseHandle {
  return createDatabase({
    url,
    service,
    poolMax,
    statementTimeoutMs: 300_000,
    idleInTransactionTimeoutMs: 300_000,
  });
}

/** A fresh database migrated to our schema (outbox, inbox) and the demo's (example_effects). */
export async function freshDatabase(
  adminUrl: string,
  prefix = "bench",
): Promise<{ url: string; handle: DatabaseHandle }> {
  const url = await createEmptyDatabase(adminUrl, prefix);
  const handle = openDatabase(url);
  await migrateToLatest(handle.db);
  await migrateExampleTables(handle.db);
  return { url, handle };
}

/** `count` events in our outbox, 1 000 per transaction, then VACUUM ANALYZE. */
export async function ourBacklog(handle: DatabaseHandle, count: number, from = 0): Promise<void> {
  for (let at = 0; at < count; at += 1_000) {
    await enqueue(
      handle.db,
      Array.from({ length: Math.min(1_000, count - at) }, (_, i) => benchEvent(from + at + i)),
    );
  }
  await sql`VACUUM ANALYZE outbox`.execute(handle.db);
}

export async function countRows(url: string, query: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(query);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

// ---- SQS ----

/** Fills a queue with `total` messages as the relay would publish them (raw delivery, the event id attribute). */
export async function fillQueue(
  sqs: SQSClient,
  queueUrl: string,
  total: number,
  senders = 16,
): Promise<void> {
  let next = 0;
  const sender = async () => {
    for (let start = next; start < total; start = next) {
      next += MAX_BATCH_ENTRIES;
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: Math.min(MAX_BATCH_ENTRIES, total - start) }, (_, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify({ name: `event-${start + index}` }),
            MessageAttributes: {
              [EVENT_ID_ATTRIBUTE]: { DataType: "String", StringValue: randomUUID() },
              [EVENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: "example.created" },
              traceparent: { DataType: "String", StringValue: TRACEPARENT },
            },
          })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: senders }, sender));
}
