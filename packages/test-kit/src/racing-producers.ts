import { enqueue, type NewEvent } from "@outbox/client";
import { type DatabaseHandle, sleep } from "@outbox/shared";

/** How the producers race: many of them on few keys, some holding their transaction open. */
export interface RacingPlan {
  readonly producers: number;
  readonly keys: number;
  readonly transactionsEach: number;
  /** Share of transactions that stay open after their enqueue, and for how long at most. */
  readonly heldShare: number;
  readonly heldMaxMs: number;
  /** Share of transactions rolled back: their events must never arrive. */
  readonly rollbackShare: number;
}

/**
 * One committed transaction: its events and keys as given, and when, on one clock counting every
 * COMMIT sent and answered, it sent its COMMIT and got the answer.
 */
export interface CommittedTransaction {
  readonly ids: readonly string[];
  readonly keys: readonly (string | null)[];
  readonly commitSent: number;
  readonly commitAnswered: number;
}

export interface RaceOutcome {
  readonly committed: readonly CommittedTransaction[];
  /** Ids of the events rolled back. */
  readonly rolledBack: readonly string[];
  /** Transactions that stayed open a while after enqueuing. */
  readonly held: number;
  /** Transactions that failed on their own (e.g. a wait past the statement timeout): nothing committed. */
  readonly failed: number;
}

/**
 * `plan.producers` loops on their own connections, each running `transactionsEach` transactions of
 * one to three events (one in ten unkeyed) on random keys; `random` (seeded) decides everything but
 * the timing. The clock ticks at each COMMIT sent and answered: a commit answered before another was
 * sent came first, which the client can tell (two commits in flight together may land either way).
 */
export async function raceProducers(
  database: DatabaseHandle,
  topic: string,
  plan: RacingPlan,
  random: () => number,
): Promise<RaceOutcome> {
  const steps = Array.from({ length: plan.producers }, (_, producer) =>
    Array.from({ length: plan.transactionsEach }, (_, t) => ({
      events: Array.from(
        { length: 1 + Math.floor(random() * 3) },
        (_, e): NewEvent => ({
          topic,
          eventType: "example.created",
          orderingKey: random() < 0.1 ? null : `key-${Math.floor(random() * plan.keys)}`,
          payload: { name: `race-${producer}-${t}-${e}` },
        }),
      ),
      holdMs: random() < plan.heldShare ? 50 + Math.floor(random() * plan.heldMaxMs) : 0,
      thinkMs: Math.floor(random() * 100),
      rollback: random() < plan.rollbackShare,
    })),
  );
  const committed: CommittedTransaction[] = [];
  const rolledBack: string[] = [];
  let held = 0;
  let failed = 0;
  let clock = 0;
  await Promise.all(
    steps.map(async (producerSteps) => {
      for (const step of producerSteps) {
        await sleep(step.thinkMs);
        const trx = await database.db.startTransaction().execute();
        try {
          const ids = await enqueue(trx, step.events);
          if (step.holdMs > 0) {
            held += 1;
            await sleep(step.holdMs);
          }
          if (step.rollback) {
            await trx.rollback().execute();
            rolledBack.push(...ids);
            continue;
          }
          const commitSent = clock++;
          await trx.commit().execute();
          const keys = step.events.map((event) => event.orderingKey ?? null);
          committed.push({ ids, keys, commitSent, commitAnswered: clock++ });
        } catch {
          failed += 1;
          await trx
            .rollback()
            .execute()
            .catch(() => {});
        }
      }
    }),
  );
  return { committed, rolledBack, held, failed };
}
