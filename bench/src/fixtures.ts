/**
 * Databases, backlogs and queues the benchmarks start from. Shared by `pnpm bench` and the
 * per-package bench scripts, so every figure starts from the same data.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { createDatabaseOn } from "@outbox/devstack";
import {
  createDatabase,
  type DatabaseHandle,
  EVENT_ID_ATTRIBUTE,
  EVENT_TYPE_ATTRIBUTE,
  enqueue,
  MAX_BATCH_ENTRIES,
  migrateToLatest,
  type NewEvent,
} from "@outbox/shared";
import { sql } from "kysely";
import pg from "pg";
import { DatabaseSetup } from "pg-transactional-outbox";

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

/** A fresh database migrated to our schema (outbox, inbox, example_effects). */
export async function freshDatabase(
  adminUrl: string,
  prefix = "bench",
): Promise<{ url: string; handle: DatabaseHandle }> {
  const url = await createEmptyDatabase(adminUrl, prefix);
  const handle = openDatabase(url);
  await migrateToLatest(handle.db);
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

// ---- pg-transactional-outbox: its own table, polling function and replication setup ----

export const PTO_TABLE = "pto_outbox";
export const PTO_NEXT_FUNCTION = "pto_next_outbox_messages";

export interface PtoNames {
  publication: string;
  slot: string;
}

/**
 * pg-transactional-outbox's outbox, created with its own DatabaseSetup scripts (table, polling
 * function and indexes; for replication also the publication and the slot, which must exist
 * before the backlog is written so the listener streams it).
 */
export async function ptoSetup(url: string, replication: boolean): Promise<PtoNames> {
  const database = new URL(url).pathname.slice(1);
  const suffix = randomBytes(4).toString("hex");
  const names = { publication: `pto_pub_${suffix}`, slot: `pto_slot_${suffix}` };
  const base = {
    outboxOrInbox: "outbox" as const,
    database,
    schema: "public",
    table: PTO_TABLE,
    listenerRole: "postgres",
  };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(DatabaseSetup.dropAndCreateTable(base));
    await client.query(DatabaseSetup.createPollingFunction({ ...base, nextMessagesName: PTO_NEXT_FUNCTION }));
    await client.query(DatabaseSetup.setupPollingIndexes({ ...base, nextMessagesName: PTO_NEXT_FUNCTION }));
    if (replication) {
      const config = { ...base, publication: names.publication, replicationSlot: names.slot };
      await client.query(DatabaseSetup.setupReplicationCore(config));
      // "This must be run in a separate database transaction"
      await client.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [names.slot]);
    }
  } finally {
    await client.end();
  }
  return names;
}

/** The same bench events as rows of pg-transactional-outbox's table, marked `parallel`. */
export async function ptoBacklog(url: string, count: number, from = 0): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let at = 0; at < count; at += 1_000) {
      const size = Math.min(1_000, count - at);
      const values: unknown[] = [];
      const rows: string[] = [];
      for (let i = 0; i < size; i += 1) {
        const n = from + at + i;
        const b = values.length;
        values.push(randomUUID(), `key-${n % KEYS}`, { n, body: BODY }, { traceparent: TRACEPARENT });
        rows.push(
          `($${b + 1}, 'bench', $${b + 2}, 'bench.happened', $${b + 2}, 'parallel', $${b + 3}, $${b + 4})`,
        );
      }
      await client.query(
        `INSERT INTO ${PTO_TABLE} (id, aggregate_type, aggregate_id, message_type, segment, concurrency, payload, metadata)
         VALUES ${rows.join(",")}`,
        values,
      );
    }
    await client.query(`VACUUM ANALYZE ${PTO_TABLE}`);
  } finally {
    await client.end();
  }
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
