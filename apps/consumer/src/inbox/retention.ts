import { type Logger, type Periodic, startPeriodic } from "@outbox/shared";
import { type Kysely, sql } from "kysely";

export interface RetentionOptions<DB> {
  readonly db: Kysely<DB>;
  readonly consumer: string;
  readonly retentionHours: number;
  readonly intervalMs: number;
  readonly log: Logger;
}

// Small batches: each DELETE is its own short transaction, so cleanup never holds many row locks
// or one long snapshot against the consumers' inserts.
const BATCH_SIZE = 1_000;

/** Deletes one batch of this consumer's inbox rows older than the retention; returns how many. */
export async function deleteExpiredInboxRows<DB>(
  db: Kysely<DB>,
  consumer: string,
  retentionHours: number,
): Promise<number> {
  // The inbox_processed_at index finds the old rows; ctid picks them without a second key lookup.
  // Safe only because the retention exceeds the queue's (checked at start-up): no redelivery of an
  // event can arrive after its row is gone.
  const result = await sql`
    DELETE FROM inbox
    WHERE ctid IN (
      SELECT ctid FROM inbox
      WHERE consumer = ${consumer}
        AND processed_at < now() - make_interval(hours => ${retentionHours})
      LIMIT ${BATCH_SIZE}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * Runs the cleanup now (rows may be overdue since the last start) and then every `intervalMs`, in
 * the background; `stop()` ends it after the current batch. Errors are logged and retried.
 */
export function startInboxRetention<DB>(options: RetentionOptions<DB>): Periodic {
  return startPeriodic(
    async (stopped) => {
      let deleted = 0;
      for (;;) {
        const batch = await deleteExpiredInboxRows(options.db, options.consumer, options.retentionHours);
        deleted += batch;
        if (batch < BATCH_SIZE || stopped.aborted) break;
      }
      if (deleted > 0) options.log.info({ deleted }, "inbox rows past retention deleted");
    },
    {
      intervalMs: options.intervalMs,
      runFirst: true,
      log: options.log,
      failureMessage: "inbox cleanup failed",
    },
  );
}
