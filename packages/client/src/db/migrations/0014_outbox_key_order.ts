import { type Kysely, sql } from "kysely";
import { ORDERING_KEY_LOCK_SPACE } from "../../protocol.js";

/**
 * Makes `seq` order the commit order of each ordering key, so the relay's per-key order (`seq`) is the
 * order in which the key's events committed, whatever the producers do.
 *
 * Before, `seq` was drawn when the row was inserted: T1 inserts e1 (seq 1) and stays open, T2 inserts
 * e2 (seq 2, same key) and commits, the relay sees only e2 and publishes it; e1 follows when T1 commits.
 * The claim's head check can only see committed rows, so no relay-side rule could close that gap.
 *
 * Now a keyed row, before it is written, takes its key's transaction-scoped advisory lock
 * (`ORDERING_KEY_LOCK_SPACE`, the first 32 bits of md5(key): `orderingKeyLock` computes the same number
 * in `enqueue`) and only then draws its `seq`. The lock is held until the transaction ends, so a later
 * producer of the key draws its `seq` after this one committed (its row visible to every later claim)
 * or rolled back. A key's producers take turns from their first insert of the key to their commit;
 * other keys, and unkeyed rows, never wait (the trigger's WHEN skips unkeyed rows without a call).
 *
 * - BEFORE ROW, because `seq` must be drawn after the lock: the identity default is evaluated before the
 *   trigger runs, so a keyed row draws twice and keeps the second (`seq` has gaps anyway).
 * - SECURITY DEFINER: the identity default needs no privilege on its sequence, an explicit `nextval`
 *   does; an application role allowed to insert into `outbox` must not need a grant it never needed.
 *   Its search_path is pinned so no caller's schema can shadow what it calls.
 * - Locks of several keys in one statement are taken in row order: `enqueue` and `enqueueWith` write a
 *   call's keyed rows in lock-number order, so two transactions enqueuing overlapping keys in one call
 *   each cannot deadlock (keys enqueued in several calls can: docs/relay.md, "Order per key").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION outbox_key_turn() RETURNS trigger LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(
        ${sql.lit(ORDERING_KEY_LOCK_SPACE)}, ('x' || left(md5(NEW.ordering_key), 8))::bit(32)::int);
      NEW.seq := nextval(pg_get_serial_sequence(TG_RELID::regclass::text, 'seq'));
      RETURN NEW;
    END
    $$
  `.execute(db);
  await sql`
    CREATE TRIGGER outbox_key_turn BEFORE INSERT ON outbox
      FOR EACH ROW WHEN (NEW.ordering_key IS NOT NULL) EXECUTE FUNCTION outbox_key_turn()
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER outbox_key_turn ON outbox`.execute(db);
  await sql`DROP FUNCTION outbox_key_turn()`.execute(db);
}
