import { enqueue, migrateToLatest } from "@outbox/client";
import {
  awsEnvironment,
  bootstrapResources,
  type PoolMode,
  type RunningPgBouncer,
  sqsClient,
  startPgBouncer,
} from "@outbox/devstack";
import {
  createDatabase,
  createLogger,
  type DatabaseHandle,
  probedDatabase,
  viaTransactionPooler,
} from "@outbox/shared";
import { createMigratedTestDatabase, createTestDatabase, queueDepth, stack } from "@outbox/test-kit";
import { DaemonFleet, type LogLine, waitUntil } from "@outbox/test-kit/process";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

// A real PgBouncer (Debian's 1.18, as users run it) in each mode, in front of the run's Postgres,
// with its defaults: the daemons must find out what it is and work through it.
const bouncers = new Map<PoolMode, RunningPgBouncer>();

beforeAll(async () => {
  const adminUrl = inject("postgresAdminUrl");
  for (const mode of ["transaction", "session"] as const) {
    bouncers.set(mode, await startPgBouncer({ postgresUrl: adminUrl, mode }));
  }
});

afterAll(async () => {
  await Promise.all([...bouncers.values()].map((bouncer) => bouncer.stop()));
});

function bouncer(mode: PoolMode): RunningPgBouncer {
  const running = bouncers.get(mode);
  if (!running) throw new Error(`no ${mode} PgBouncer`);
  return running;
}

const POOL = { statementTimeoutMs: 5_000, idleInTransactionTimeoutMs: 10_000 } as const;

describe("the transaction pooler probe", () => {
  it("sees a transaction pooler, and neither a direct connection nor a session pooler", async () => {
    const url = await createTestDatabase("pooler_probe");
    const seen = async (to: string) => {
      const handle = createDatabase({ url: to, service: "probe-test", ...POOL });
      try {
        return await viaTransactionPooler(handle.clientConfig);
      } finally {
        await handle.close(5_000);
      }
    };
    expect(await seen(url)).toBe(false);
    expect(await seen(bouncer("session").via(url))).toBe(false);
    expect(await seen(bouncer("transaction").via(url))).toBe(true);
  });

  it("migrates and runs parameterised statements and transactions through it, timeouts per transaction", async () => {
    const url = bouncer("transaction").via(await createTestDatabase("pooler_migrate"));
    const lines: string[] = [];
    const log = createLogger({ service: "pooler-test", version: "", level: "info" });
    log.info = ((...args: unknown[]) => {
      lines.push(String(args.at(-1)));
    }) as typeof log.info;
    const settings = { url, service: "pooler-test", poolMax: 4, ...POOL };
    const database = await probedDatabase(createDatabase(settings), settings, log);
    try {
      expect(database.transactionPooler).toBe(true);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("transaction pooler");
      await migrateToLatest(database.db);
      // Many clients, many statement texts, the pooler's server connections shared among them.
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          database.db.transaction().execute(async (trx) => {
            await enqueue(trx, [{ topic: `t${i % 7}`, eventType: "pooler.probe", payload: { i } }]);
            const { rows } = await sql<{
              timeout: string;
            }>`SELECT current_setting('statement_timeout') AS timeout, ${i}::int AS i`.execute(trx);
            expect(rows[0]?.timeout).toBe("5s");
          }),
        ),
      );
      const { rows } = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM outbox WHERE event_type = ${"pooler.probe"}`.execute(database.db);
      expect(Number(rows[0]?.n)).toBe(40);
    } finally {
      await database.close(5_000);
    }
  });
});

/** Lines at warn or above (pino: 40 warn, 50 error, 60 fatal). */
function loudLines(lines: readonly LogLine[]): LogLine[] {
  return lines.filter((line) => typeof line.level === "number" && line.level >= 40);
}

/**
 * The daemons behind PgBouncer: in transaction mode at every default (the relay polls), with
 * DATABASE_SESSION_URL (its LISTEN there: a poll interval far longer than the wake-up), and in session mode.
 */
const CASES: ReadonlyArray<{ mode: PoolMode; sessionUrl: boolean; pollIntervalMs: number }> = [
  { mode: "transaction", sessionUrl: false, pollIntervalMs: 1_000 },
  { mode: "transaction", sessionUrl: true, pollIntervalMs: 30_000 },
  { mode: "session", sessionUrl: false, pollIntervalMs: 30_000 },
];

describe.each(CASES)(
  "relay and consumer through PgBouncer in $mode mode (DATABASE_SESSION_URL: $sessionUrl)",
  ({ mode, sessionUrl, pollIntervalMs }) => {
    let database: DatabaseHandle;
    let directUrl: string;
    const fleet = new DaemonFleet();

    beforeAll(async () => {
      ({ url: directUrl, handle: database } = await createMigratedTestDatabase(
        `pooler_${mode}_${sessionUrl}`,
        {
          service: "pooler-producer",
          poolMax: 5,
        },
      ));
    });

    afterAll(async () => {
      await fleet.killAll();
      await database.close(5_000);
    });

    it("deliver every event once, DLQ 0, no warn line, an event after idle within the poll interval, SIGTERM clean", async () => {
      const resources = await bootstrapResources(stack().aws, {
        name: `pooler-${mode}-${sessionUrl ? "s" : "p"}-${Date.now().toString(36)}`,
        rawDelivery: true,
        maxReceiveCount: 3,
      });
      const url = bouncer(mode).via(directUrl);
      const common = { DATABASE_URL: url, LOG_LEVEL: "info", ...awsEnvironment(stack().aws) };
      const relay = fleet.relay(`relay-${mode}`, {
        ...common,
        RELAY_TOPIC_ARNS: `pool=${resources.topicArn}`,
        ...(pollIntervalMs === 1_000 ? {} : { RELAY_POLL_INTERVAL_MS: String(pollIntervalMs) }),
        ...(sessionUrl ? { DATABASE_SESSION_URL: directUrl } : {}),
      });
      const consumer = fleet.consumer(`consumer-${mode}`, {
        ...common,
        CONSUMER_QUEUE_URL: resources.queueUrl,
        CONSUMER_DLQ_URL: resources.dlqUrl,
        CONSUMER_WAIT_TIME_SECONDS: "1",
      });
      // The mix, smaller: keyed on a few keys, and unkeyed; written straight to Postgres.
      const events = Array.from({ length: 60 }, (_, i) => ({
        topic: "pool",
        eventType: "example.created",
        payload: { name: `event-${i}` },
        orderingKey: i < 40 ? `key-${i % 4}` : null,
      }));
      await database.db.transaction().execute((trx) => enqueue(trx, events));
      const effects = async () =>
        Number(
          (await sql<{ n: string }>`SELECT count(*) AS n FROM example_effects`.execute(database.db)).rows[0]
            ?.n,
        );
      await waitUntil("every effect", async () => (await effects()) >= events.length, {
        timeoutMs: 120_000,
        alive: [relay, consumer],
      });
      // Idle: the relay has claimed nothing for a while; then one event, from the producer.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await database.db
        .transaction()
        .execute((trx) =>
          enqueue(trx, [{ topic: "pool", eventType: "example.created", payload: { name: "late" } }]),
        );
      await waitUntil("the late effect", async () => (await effects()) >= events.length + 1, {
        timeoutMs: 60_000,
        alive: [relay, consumer],
      });
      // The server's clock on both ends: commit (created_at) → published_at.
      const { rows } = await sql<{ ms: number }>`
      SELECT extract(epoch FROM (published_at - created_at)) * 1000 AS ms
      FROM outbox WHERE payload::text LIKE ${'%"late"%'}
    `.execute(database.db);
      const idleToPublishedMs = Number(rows[0]?.ms);
      // By the poll after the insert at the latest (the wake-up, where there is one, long before).
      expect(idleToPublishedMs).toBeLessThan(2 * pollIntervalMs);
      const stops = await Promise.all([relay.stop("SIGTERM"), consumer.stop("SIGTERM")]);
      for (const stop of stops) expect(stop.code).toBe(0);
      expect(await effects()).toBe(events.length + 1);
      const { rows: once } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM (SELECT event_id FROM inbox GROUP BY event_id HAVING count(*) > 1) twice
    `.execute(database.db);
      expect(Number(once[0]?.n)).toBe(0);
      const dlq = await queueDepth(sqsClient(stack().aws), resources.dlqUrl);
      expect(dlq.visible + dlq.inFlight).toBe(0);
      expect(loudLines(relay.lines)).toEqual([]);
      expect(loudLines(consumer.lines)).toEqual([]);
      const said = (lines: readonly LogLine[]) =>
        lines.filter((line) => String(line.msg).includes("transaction pooler")).length;
      // Transaction mode: one line each that it is there (and the relay's that it polls); session: none.
      expect(said(consumer.lines)).toBe(mode === "transaction" ? 1 : 0);
      expect(said(relay.lines)).toBe(mode === "transaction" ? (sessionUrl ? 1 : 2) : 0);
      expect(bouncer(mode).log()).not.toContain("when not linked");
      console.log(
        `pooler ${mode} (session URL ${sessionUrl}): idle → published ${Math.round(idleToPublishedMs)} ms`,
      );
    }, 240_000);
  },
);
