import { type Kysely, sql } from "kysely";

/**
 * A dead row keeps its ordering key blocked: its key's later events wait until an operator requeues it
 * (`relay requeue-dead`) or skips it (`relay skip-dead`, which sets `skipped_at`). Before, a dead row
 * simply stopped holding its key, so the key's later events overtook it.
 *
 * - `skipped_at`: an operator gave up on this dead row's place in its key's order. Nullable without a
 *   default, so adding it rewrites nothing.
 * - `outbox_dead_heads`: the claim asks, per keyed candidate, "does a dead, unskipped row hold this
 *   key?". It holds only such rows (normally none), so the probe is one lookup in an almost empty index,
 *   and the relay's blocked-keys gauge and `relay status` count them from it. Its predicate's columns
 *   are never touched by a claim (`locked_until`, `locked_by`), so claims stay HOT updates.
 *   `CREATE INDEX` scans the table while blocking inserts: apply it in a quiet moment on a large outbox.
 * - Rows already dead were overtaken by their keys' later events under the old rule: they are marked
 *   skipped as of their death, so upgrading does not suddenly stop keys whose order is already past them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox ADD COLUMN skipped_at timestamptz`.execute(db);
  await sql`UPDATE outbox SET skipped_at = dead_at WHERE dead_at IS NOT NULL AND published_at IS NULL`.execute(
    db,
  );
  await sql`
    CREATE INDEX outbox_dead_heads ON outbox (ordering_key)
      WHERE dead_at IS NOT NULL AND published_at IS NULL AND skipped_at IS NULL AND ordering_key IS NOT NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_dead_heads`.execute(db);
  await sql`ALTER TABLE outbox DROP COLUMN skipped_at`.execute(db);
}
