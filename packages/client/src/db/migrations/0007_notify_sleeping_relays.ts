import { type Kysely, sql } from "kysely";
import {
  INSERT_IN_FLIGHT_LOCK,
  OUTBOX_CHANNEL,
  OUTBOX_LOCK_SPACE,
  RELAY_ASLEEP_LOCK,
} from "../../protocol.js";

/**
 * The insert trigger notifies only when a relay is asleep (the advisory locks are described in
 * protocol.ts). A NOTIFY is not free: Postgres serialises
 * the commits of notifying transactions (one queue lock, held through the commit's WAL flush), which
 * takes group commit away from every writer; an enqueueing transaction paid about a third more for it.
 * A relay that is busy claiming needs no wake-up, so writers now skip it while none is asleep.
 *
 * No wake-up can be lost. A writer that found no relay asleep holds `INSERT_IN_FLIGHT` until it
 * commits. A relay going to sleep first takes `RELAY_ASLEEP` (every writer checking after that
 * notifies), then sleeps only once it could take `INSERT_IN_FLIGHT` exclusively — every writer that
 * checked before has ended — and a claim made after that found nothing. Until then it polls briefly
 * (apps/relay/src/wake-on-insert.ts).
 *
 * The writer tests `RELAY_ASLEEP` with a session-level try-and-release rather than holding it: held to
 * its commit, it would make relays wait for writers and writers fail each other's test.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION outbox_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(${sql.lit(OUTBOX_LOCK_SPACE)}, ${sql.lit(INSERT_IN_FLIGHT_LOCK)});
      IF pg_try_advisory_lock(${sql.lit(OUTBOX_LOCK_SPACE)}, ${sql.lit(RELAY_ASLEEP_LOCK)}) THEN
        PERFORM pg_advisory_unlock(${sql.lit(OUTBOX_LOCK_SPACE)}, ${sql.lit(RELAY_ASLEEP_LOCK)});
      ELSE
        PERFORM pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '');
      END IF;
      RETURN NULL;
    END
    $$
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION outbox_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '');
      RETURN NULL;
    END
    $$
  `.execute(db);
}
