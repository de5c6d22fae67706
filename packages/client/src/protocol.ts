/**
 * The names writers, relays and the migrations agree on. Here, not in the migrations that first used
 * them: a migration is history (never edited), these are what running code reads today.
 */

/** The channel the outbox's insert trigger notifies and a sleeping relay LISTENs on. */
export const OUTBOX_CHANNEL = "outbox_inserted";

/**
 * The key space of the outbox's advisory locks (the two-key form: applications using the one-key
 * form cannot collide with it), and the locks in it.
 * - `RELAY_ASLEEP_LOCK`: a relay about to sleep holds it shared on its LISTEN connection.
 * - `INSERT_IN_FLIGHT_LOCK`: every transaction that inserts into the outbox holds it shared until it ends.
 * - `BOOKKEEPING_ADOPTION_LOCK`: held while a migration set takes its rows over from kysely's
 *   default bookkeeping table, so processes starting at once move them once.
 */
export const OUTBOX_LOCK_SPACE = 0x6f757462; // "outb"
export const RELAY_ASLEEP_LOCK = 1;
export const INSERT_IN_FLIGHT_LOCK = 2;
export const BOOKKEEPING_ADOPTION_LOCK = 3;

/**
 * The key space of the per-ordering-key locks (two-key form: this space, then the key's lock number,
 * `orderingKeyLock` in outbox/ordering-key-lock.ts). A space of its own because the lock numbers cover
 * the whole int4 range and would meet `OUTBOX_LOCK_SPACE`'s small ones. The outbox's insert trigger
 * (migration 0014) holds a keyed row's lock until its transaction ends.
 */
export const ORDERING_KEY_LOCK_SPACE = 0x6f75746b; // "outk"

/**
 * The outbox migrations' kysely bookkeeping tables: of their own, so an application's own kysely
 * migrations (kysely's default `kysely_migration`) and ours never see each other's rows.
 */
export const OUTBOX_MIGRATION_TABLE = "outbox_migration";
export const OUTBOX_MIGRATION_LOCK_TABLE = "outbox_migration_lock";
