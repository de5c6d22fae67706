/**
 * Type-level checks, run by `pnpm typecheck` (nothing here executes): `enqueue` and the handlers take
 * the schema type an application has, in whichever shape it was written or generated, and still
 * refuse what cannot work. `fixtures/kysely-codegen/db.d.ts` is kysely-codegen's output for our
 * migrations, verbatim (test/packaging/schema-shapes.test.ts regenerates it and compares).
 */
import type { Generated, Kysely, Transaction } from "kysely";
import { defineBatchHandler, defineHandlers, enqueue, enqueueWith, type OutboxTables } from "../src/index.js";
import type { DB as CodegenDatabase } from "./fixtures/kysely-codegen/db.js";

const event = { topic: "orders", eventType: "order.placed", orderingKey: "42", payload: { orderId: "42" } };

/** The README's shape: a hand-written schema extending OutboxTables. */
interface AppDatabase extends OutboxTables {
  orders: { id: string; total_cents: number; placed_at: Generated<Date> };
}

export async function readmeSchema(db: Kysely<AppDatabase>): Promise<string[]> {
  return db.transaction().execute((trx) => enqueue(trx, [event]));
}

export async function codegenSchema(db: Kysely<CodegenDatabase>): Promise<string[]> {
  const viaKysely = await db
    .transaction()
    .execute((trx) => enqueue(trx, [event], { maxMessageBytes: 1_024 }));
  // The rows enqueueWith hands over go into the generated table through kysely's own insert.
  const viaOwnStatement = await db
    .transaction()
    .execute((trx) =>
      enqueueWith([{ ...event, delayMs: 1_000 }], (rows) => trx.insertInto("outbox").values(rows).execute()),
    );
  return [...viaKysely, ...viaOwnStatement];
}

/** A producer's schema needs no inbox: enqueue writes the outbox only. */
export async function outboxOnly(db: Kysely<Pick<CodegenDatabase, "outbox">>): Promise<string[]> {
  return enqueue(db, [event]);
}

export async function refused(
  noOutbox: Kysely<{ orders: AppDatabase["orders"] }>,
  numericPayload: Kysely<{ outbox: Omit<CodegenDatabase["outbox"], "payload"> & { payload: number } }>,
  noTopic: Kysely<{ outbox: Omit<CodegenDatabase["outbox"], "topic"> }>,
  extraRequired: Kysely<{ outbox: CodegenDatabase["outbox"] & { tenant: string } }>,
): Promise<void> {
  // @ts-expect-error no outbox table
  await enqueue(noOutbox, [event]);
  // @ts-expect-error the payload column would not take JSON text
  await enqueue(numericPayload, [event]);
  // @ts-expect-error no topic column
  await enqueue(noTopic, [event]);
  // @ts-expect-error a required column enqueue does not write
  await enqueue(extraRequired, [event]);
  // @ts-expect-error events are still checked: eventType is required
  await enqueue(noTopic as unknown as Kysely<CodegenDatabase>, [{ topic: "orders", payload: {} }]);
}

/** The application's own code, typed for a transaction. */
declare function recordOrder<DB>(trx: Transaction<DB>, id: string): Promise<void>;

export const handlers = defineHandlers<{ "order.placed": { orderId: string } }, CodegenDatabase>({
  "order.placed": async (received, { trx }) => {
    await recordOrder(trx, received.payload.orderId);
    await trx.insertInto("inbox").values({ consumer: "c", event_id: received.id, message_id: "m" }).execute();
  },
});

export const batchHandlers = defineHandlers<{ "order.placed": { orderId: string } }, AppDatabase>({
  "order.placed": defineBatchHandler({
    handleBatch: async (events, { trx }) => {
      for (const received of events) await recordOrder(trx, received.payload.orderId);
      // @ts-expect-error the schema's tables are still checked
      await trx.insertInto("missing").values({}).execute();
    },
  }),
});
