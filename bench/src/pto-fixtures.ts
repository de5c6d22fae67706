/** pg-transactional-outbox's own table, polling function and replication set-up, for the bench's peer. */
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { DatabaseSetup } from "pg-transactional-outbox";
import { BODY, KEYS, TRACEPARENT } from "./fixtures.js";

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
