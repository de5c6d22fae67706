import { type BackoffPolicy, backoffMs, type Logger } from "@outbox/shared";
import { type Kysely, sql } from "kysely";
import type { Database } from "./db/schema.js";
import type { EquipmentClient } from "./equipment-client.js";
import { markLinked, markRetryLater } from "./gear-link-state.js";
import type { ApiConfig } from "./settings.js";

export interface ReconcileOptions {
  readonly db: Kysely<Database>;
  readonly equipment: EquipmentClient;
  readonly batchSize: number;
  /** How long a pass holds the links it took, so another replica's pass leaves them alone. */
  readonly leaseMs: number;
  readonly backoff: BackoffPolicy;
  readonly log: Logger;
}

export interface ReconcileSummary {
  readonly attempted: number;
  readonly linked: number;
  readonly failed: number;
}

/** The settings a reconciliation pass reads (the service's, or the one-shot command's subset). */
export type ReconcileConfig = Pick<
  ApiConfig,
  | "equipmentTimeoutMs"
  | "dbStatementTimeoutMs"
  | "reconcileBatchSize"
  | "reconcileBackoffBaseMs"
  | "reconcileBackoffMaxMs"
>;

export function reconcileOptions(
  config: ReconcileConfig,
  dependencies: Pick<ReconcileOptions, "db" | "equipment" | "log">,
): ReconcileOptions {
  return {
    ...dependencies,
    batchSize: config.reconcileBatchSize,
    // A pass holds its links for one equipment call and the statement that records its outcome.
    leaseMs: config.equipmentTimeoutMs + config.dbStatementTimeoutMs,
    backoff: { baseMs: config.reconcileBackoffBaseMs, maxMs: config.reconcileBackoffMaxMs },
  };
}

/**
 * One pass of the reconciliation job: takes due pending links and asks the equipment service again.
 * The links are taken by pushing their next attempt past the lease in one short statement, so no
 * transaction (and no row lock) stays open across the remote calls. The idempotency key makes a
 * link the service already holds harmless to send again.
 */
export async function reconcilePendingLinks(options: ReconcileOptions): Promise<ReconcileSummary> {
  const { rows } = await sql<{ photo_id: string; gear_ids: string[]; attempts: number }>`
    UPDATE photo_gear_links
    SET next_attempt_at = now() + ${options.leaseMs} * interval '1 millisecond'
    WHERE photo_id IN (
      SELECT photo_id FROM photo_gear_links
      WHERE state = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at
      LIMIT ${options.batchSize}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING photo_id, gear_ids, attempts
  `.execute(options.db);
  const outcomes = await Promise.all(
    rows.map(async (row) => {
      const outcome = await options.equipment.link({ photoId: row.photo_id, gearIds: row.gear_ids });
      if (outcome.linked) await markLinked(options.db, row.photo_id);
      else {
        await markRetryLater(
          options.db,
          row.photo_id,
          outcome.reason,
          backoffMs(row.attempts + 1, options.backoff),
        );
      }
      return outcome.linked;
    }),
  );
  const linked = outcomes.filter(Boolean).length;
  const summary = { attempted: rows.length, linked, failed: rows.length - linked };
  if (summary.attempted > 0) options.log.info(summary, "gear links reconciled");
  return summary;
}
