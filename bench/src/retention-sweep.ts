/**
 * One sweep of the relay's own retention (apps/relay/src/retention.ts), timed, with the WAL it wrote:
 * what deleting a day of history costs the database.
 */

import { performance } from "node:perf_hooks";
import type { OutboxTables } from "@outbox/client";
import { createLogger, type DatabaseHandle } from "@outbox/shared";
import { type Kysely, sql } from "kysely";
// Below the relay's public API: the sweep a relay with RELAY_RETENTION_MS runs, unchanged.
import { startRetention } from "../../apps/relay/src/retention.js";

export interface RetentionSweep {
  deleted: number;
  seconds: number;
  walBytes: number;
}

async function walPosition(handle: DatabaseHandle): Promise<string> {
  const { rows } = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.execute(handle.db);
  return rows[0]?.lsn ?? "0/0";
}

async function walBytesSince(handle: DatabaseHandle, from: string): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`
    SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${from}::pg_lsn)::bigint AS bytes
  `.execute(handle.db);
  return Number(rows[0]?.bytes ?? 0);
}

/**
 * Runs the retention (published rows older than `maxAgeMs`, at least one) until its first sweep ends,
 * alone on the database. The sweep's end is read from its own log line ("retention: deleted published rows"), which
 * carries the count; the WAL figure is the server's, so it includes whatever else wrote meanwhile
 * (autovacuum, checkpoints' full-page images) — as a production server's would.
 */
export async function timedRetentionSweep(handle: DatabaseHandle, maxAgeMs: number): Promise<RetentionSweep> {
  const walFrom = await walPosition(handle);
  let swept: (deleted: number) => void = () => {};
  let failed: (error: Error) => void = () => {};
  const done = new Promise<number>((resolve, reject) => {
    swept = resolve;
    failed = reject;
  });
  const log = createLogger({
    service: "bench-retention",
    version: "0",
    level: "info",
    destination: {
      write(line: string) {
        const { deleted, level, msg } = JSON.parse(line) as {
          deleted?: number;
          level?: number;
          msg?: string;
        };
        if (typeof deleted === "number") swept(deleted);
        // pino's warn is 40: the sweep failed (it would only be retried at the next interval).
        else if ((level ?? 0) >= 40) failed(new Error(`retention sweep: ${msg ?? line}`));
      },
    },
  });
  const t0 = performance.now();
  // A 1 ms interval: the first sweep (which waits an interval) starts at once.
  const retention = startRetention(handle.db as Kysely<OutboxTables>, { maxAgeMs, intervalMs: 1 }, log);
  try {
    const deleted = await done;
    const seconds = (performance.now() - t0) / 1_000;
    return { deleted, seconds, walBytes: await walBytesSince(handle, walFrom) };
  } finally {
    await retention.stop();
  }
}
