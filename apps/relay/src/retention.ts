import type { OutboxTables as Database } from "@outbox/client";
import { type Logger, sleep } from "@outbox/shared";
import { type Kysely, sql } from "kysely";

export interface RetentionOptions {
  /** Published rows older than this are deleted. */
  readonly maxAgeMs: number;
  /** Pause between sweeps. */
  readonly intervalMs: number;
  /** Rows per DELETE: small statements keep locks and WAL bursts short next to the claim. */
  readonly batchSize?: number;
}

export interface Retention {
  /** Ends the sweeps, waiting for the DELETE in flight. */
  stop(): Promise<void>;
}

/** Deletes old published rows in the background, in small batches, through `outbox_published_at`. */
export function startRetention(db: Kysely<Database>, options: RetentionOptions, log?: Logger): Retention {
  const stopped = new AbortController();
  const batchSize = options.batchSize ?? 1_000;
  const sweep = async () => {
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
      if (count < batchSize || stopped.signal.aborted) return deleted;
    }
  };
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      await sleep(options.intervalMs, stopped.signal);
      if (stopped.signal.aborted) return;
      try {
        const deleted = await sweep();
        if (deleted > 0) log?.info({ deleted }, "retention: deleted published rows");
      } catch (error) {
        log?.warn({ err: error }, "retention sweep failed; retrying at the next interval");
      }
    }
  })();
  return {
    async stop() {
      stopped.abort();
      await loop;
    },
  };
}
