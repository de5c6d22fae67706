import type {
  ColumnType,
  Expression,
  FunctionModule,
  Generated,
  Insertable,
  Kysely,
  Selectable,
} from "kysely";

/** JSON columns: written as JSON text (serialised once, by us), read back parsed by pg. */
type Json<T> = ColumnType<T, string, string>;
/** Timestamps the database fills in by default. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/**
 * A due time, written as a Date or as an SQL expression the INSERT evaluates: `enqueue`'s `delayMs`
 * counts on the database's clock, the one the relay's claim compares with.
 */
type DueTimestamp = ColumnType<Date, Date | string | Expression<Date> | undefined, Date | string>;
type NullableDueTimestamp = ColumnType<
  Date | null,
  Date | string | Expression<Date> | null | undefined,
  Date | string | null
>;

export interface OutboxTable {
  /** The event id (UUIDv7), the dedup key downstream. */
  id: string;
  /** Relay order; bigint arrives as a string so no precision is lost. */
  seq: ColumnType<string, never, never>;
  /** Logical destination; the relay maps it to a topic ARN. */
  topic: string;
  /** Rows sharing a key publish in `seq` order, one at a time (FIFO MessageGroupId). */
  ordering_key: string | null;
  event_type: string;
  /** A `json` column, not `jsonb`: it keeps the caller's bytes, which are what the relay publishes. */
  payload: Json<unknown>;
  headers: ColumnType<Record<string, string>, string | undefined, string>;
  created_at: DefaultedTimestamp;
  attempts: Generated<number>;
  /** Not claimed before this: the due time of a delayed event, or the end of a retry's backoff. */
  available_at: DueTimestamp;
  /** The due time `enqueue` was asked for (`deliverAt` / `delayMs`); null: at once. */
  deliver_at: NullableDueTimestamp;
  locked_until: NullableTimestamp;
  locked_by: string | null;
  published_at: NullableTimestamp;
  dead_at: NullableTimestamp;
  /** A dead row an operator skipped (`relay skip-dead`): it no longer holds its ordering key back. */
  skipped_at: NullableTimestamp;
  last_error: string | null;
}

export interface InboxTable {
  /** Which consumer processed the event: several consumers may each see the same event once. */
  consumer: string;
  event_id: string;
  message_id: string;
  received_at: DefaultedTimestamp;
  processed_at: DefaultedTimestamp;
}

/**
 * The tables the migrations create, typed for this package. An application's own schema type may
 * extend it (`interface AppDatabase extends OutboxTables { orders: OrdersTable }`) or carry the
 * tables as kysely-codegen generates them: `enqueue` takes any `DB` that is an
 * {@link OutboxDatabase}, and the handlers take any `DB` at all.
 */
export interface OutboxTables {
  outbox: OutboxTable;
  inbox: InboxTable;
}

/**
 * What `enqueue` puts in each column it writes: JSON as text, a due time as a Date (or an SQL
 * expression, which kysely takes wherever it takes the column's value); a column left out gets its
 * default.
 */
interface OutboxWrite {
  id: string;
  topic: string;
  ordering_key: string | null;
  event_type: string;
  payload: string;
  headers: string;
  available_at?: Date;
  deliver_at?: Date | null;
}

/** A kysely instance or transaction (`Kysely`, `Transaction`, `ControlledTransaction`) of any schema. */
export type KyselyInstance = Pick<Kysely<unknown>, "isTransaction" | "getExecutor">;

/**
 * The schema type of a kysely instance or transaction. Read off `fn`, a member typed with it as it
 * is: inferring it from `Kysely<DB>` itself compares a `Transaction` with a `Kysely` member by
 * member, which loses it.
 */
export type DatabaseOf<Db> = Db extends { readonly fn: FunctionModule<infer DB, infer _Tables> } ? DB : never;

/** Why `enqueue` cannot write to the `outbox` table of schema type `DB`; `never` when it can. */
type OutboxSchemaProblem<DB> = [DB] extends [never]
  ? "it is not a kysely instance or transaction"
  : DB extends { outbox: infer Table }
    ? [keyof OutboxWrite] extends [keyof Table]
      ? OutboxWrite extends Insertable<Table>
        ? never
        : "its outbox table refuses a value enqueue writes, or requires a column enqueue does not write"
      : "its outbox table lacks a column enqueue writes"
    : "it has no outbox table";

/**
 * What `enqueue` holds the schema type `DB` of the transaction it is given to: its `outbox` table has
 * every column `enqueue` writes, each accepting what `enqueue` puts there, and requires no other.
 * Checked against kysely's own `Insertable`, so any spelling of the table qualifies: ours
 * ({@link OutboxTables}), kysely-codegen's (`Generated<Timestamp>`, `Json`, `Int8`), one's own. For a
 * schema that does not (a `number` payload, no `topic` column, no `outbox` table), it is a property
 * the transaction lacks, named after the problem, so the compiler's error says what is wrong.
 */
export type OutboxDatabase<DB> = [OutboxSchemaProblem<DB>] extends [never]
  ? unknown
  : { readonly "enqueue cannot write to this schema": OutboxSchemaProblem<DB> };

export type OutboxRow = Selectable<OutboxTable>;
export type NewOutboxRow = Insertable<OutboxTable>;
export type InboxRow = Selectable<InboxTable>;
