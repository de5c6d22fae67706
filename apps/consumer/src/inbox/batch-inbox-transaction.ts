import type { BatchHandler, ConsumedEvent, Deadline } from "@outbox/client";
import type { Logger } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import { literal, runClaimedTransaction } from "./inbox-transaction.js";

export interface BatchInboxTransaction<DB> {
  readonly pool: PostgresPool;
  readonly consumer: string;
  /** Events of one type, from different messages (an event may come twice, in two messages). */
  readonly events: readonly ConsumedEvent[];
  readonly handler: BatchHandler<string, unknown, DB>;
  /** The earliest of the messages' deadlines. */
  readonly deadline: Deadline;
  readonly statementTimeoutMs: number;
  readonly log: () => Logger;
}

/**
 * The exactly-once step for a batch: all its inbox rows and the handler's writes commit in one
 * transaction, or none do. Resolves the events that were processed; every other event of the batch
 * was a duplicate (processed before, or a second copy in the same batch), and the handler never saw it.
 */
export async function runBatchInboxTransaction<DB>(
  options: BatchInboxTransaction<DB>,
): Promise<ReadonlySet<ConsumedEvent>> {
  const { consumer, events } = options;
  const rows = events
    .map((event) => `(${literal(consumer)}, ${literal(event.id)}, ${literal(event.messageId)})`)
    .join(", ");
  const processed = await runClaimedTransaction<DB, ConsumedEvent[]>({
    ...options,
    // One row per message; DO NOTHING skips both a row committed before and a second copy of an
    // event inside this same INSERT. RETURNING names the rows it did insert: the events to handle.
    claim: `INSERT INTO inbox (consumer, event_id, message_id) VALUES ${rows}
       ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
    claimedIds: events.map((event) => event.id),
    claimed: (result) => {
      const inserted = new Set(result.rows.map((row) => (row as { event_id: string }).event_id));
      // The first message of each inserted event id is the one handled; a later copy is a duplicate.
      const fresh = events.filter((event) => inserted.delete(event.id));
      return fresh.length === 0 ? undefined : fresh;
    },
    handle: (fresh, context) => options.handler.handleBatch(fresh, context),
  });
  return new Set(processed);
}
