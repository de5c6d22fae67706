import type { OutboxTables as Database } from "@outbox/client";
import { type Logger, type Periodic, startPeriodic } from "@outbox/shared";
import { type Kysely, sql } from "kysely";

export interface RetentionOptions {
  /** Published rows older than this are deleted. */
  readonly maxAgeMs: number;
  /** Pause between sweeps. */
  readonly intervalMs: number;
  /** Rows per DELETE: small statements keep locks and WAL bursts short next to the claim. */
  readonly batchSize?: number;
}

/**
 * Deletes old published rows in the background, in small batches, through `outbox_published_at`.
 * The first sweep waits an interval: the relay has just started, and nothing is overdue by then.
 * `stop()` ends the sweeps, waiting for the DELETE in flight.
 */
export function startRetention(db: Kysely<Database>, options: RetentionOptions, log?: Logger): Periodic {
  const batchSize = options.batchSize ?? 1_000;
  const sweep = async (stopped: AbortSignal) => {
    let deleted = 0;
    for (;;) {
      const result = await sql`
        DELETE FROM outbox WHERE id IN (
          SELECT id FROM outbox
          WHERE published_at < now() - ${options.maxAgeMs} * interval '1 millisecond'
          ORDER BY published_at
          LIMIT ${batchSize}
        )
      `.execute(db);
      const count = Number(result.numAffectedRows ?? 0);
      deleted += count;
      if (count < batchSize || stopped.aborted) break;
    }
    if (deleted > 0) log?.info({ deleted }, "retention: deleted published rows");
  };
  return startPeriodic(sweep, {
    intervalMs: options.intervalMs,
    runFirst: false,
    log,
    failureMessage: "retention sweep failed; retrying at the next interval",
  });
}
