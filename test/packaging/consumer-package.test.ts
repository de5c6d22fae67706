import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { enqueue } from "@outbox/client";
import { awsEnvironment, bootstrapResources } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import {
  awsClients,
  type BuiltEntryProcess,
  createMigratedTestDatabase,
  drainUntil,
  expectCleanStops,
  hangLimit,
  stack,
  startBuiltEntry,
  uniqueName,
  type WaitOptions,
  waitUntil,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDatabase } from "./fixtures/own-entry-point/order-handlers.js";
import { compile, compilers, installedCopy, installScratchApp, type Packed } from "./pack-check.js";
import { packedPublishable } from "./packed-once.js";

/**
 * The consumer and the relay as an application outside this repo runs them from its own entry
 * point: @outbox/client, @outbox/shared, @outbox/consumer and @outbox/relay packed with `pnpm pack`,
 * installed offline from the tarballs into a throwaway application in the OS temp dir, whose
 * handlers (fixtures/own-entry-point/) have a dependency of their own (zod) and whose entry points
 * call runConsumer and runRelay. Compiled there under `strict` and `nodenext`, then run with plain
 * node (no loader, no `development` condition) against the run's stack. Third-party packages are
 * linked to the workspace's copies, so nothing is fetched and the lockfile decides every version.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = ["order-handlers.ts", "consumer-main.ts", "relay-main.ts"];
/** The consumer's name in the inbox, as consumer-main.ts sets it in code. */
const CONSUMER_NAME = "order-totals";
const EVENTS = 40;
/** Of EVENTS, those enqueued while no consumer runs: the second run has these to do at least. */
const LATE_EVENTS = 10;

let temp: string;
let app: string;
let databaseUrl: string;
let database: DatabaseHandle;
let resources: Awaited<ReturnType<typeof bootstrapResources>>;
const started: BuiltEntryProcess[] = [];

async function installApp(packed: readonly Packed[]): Promise<void> {
  await installScratchApp(
    root,
    app,
    packed,
    {
      // The handlers' own dependency: in the application, not in our packages' manifests.
      zod: installedCopy(root, "zod", []),
      "@types/node": installedCopy(root, "@types/node", []),
    },
    path.join(temp, "store"),
  );
  fs.mkdirSync(path.join(app, "src"));
  fs.writeFileSync(
    path.join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2023"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        // Our declarations are checked; the AWS SDK's and pino's own are theirs.
        skipLibCheck: true,
        types: ["node"],
        rootDir: "src",
        outDir: "dist",
      },
      include: ["src"],
    }),
  );
  for (const file of FIXTURES) {
    fs.copyFileSync(
      new URL(`fixtures/own-entry-point/${file}`, import.meta.url),
      path.join(app, "src", file),
    );
  }
  const [typescript5] = compilers(root);
  if (typescript5 === undefined) throw new Error("no TypeScript in the workspace");
  await compile(app, typescript5, "tsconfig.json");
}

beforeAll(
  async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-consumer-pack-"));
    app = path.join(temp, "app");
    await installApp(await packedPublishable(root));
    ({ url: databaseUrl, handle: database } = await createMigratedTestDatabase("consumer_package", {
      service: "consumer-package-test",
      poolMax: 2,
    }));
    // The application's own table, as its own migrations would create it.
    await sql`CREATE TABLE order_totals (event_id uuid NOT NULL, order_id text NOT NULL, total_cents integer NOT NULL)`.execute(
      database.db,
    );
    resources = await bootstrapResources(stack().aws, {
      name: uniqueName("consumer-package"),
      rawDelivery: true,
      visibilityTimeoutSeconds: 30,
    });
    // The run's pack (or the wait for it), the app's install and its compile.
  },
  hangLimit({ pack: 1, install: 1, compile: 1 }),
);

afterAll(async () => {
  for (const child of started) if (child.child.exitCode === null) child.child.kill("SIGKILL");
  await Promise.all(started.map((child) => child.exited));
  await database?.close(5_000);
  if (temp) fs.rmSync(temp, { recursive: true, force: true });
});

/** `node dist/<entry>` in the application, with nothing but `env` in its environment. */
function startApp(entry: string, env: Readonly<Record<string, string>>): BuiltEntryProcess {
  const running = startBuiltEntry(app, path.join("dist", entry), env);
  started.push(running);
  return running;
}

/** A wait that ends as soon as one of `alive` exits, polling every 100 ms. */
const watching = (alive: readonly BuiltEntryProcess[]): WaitOptions => ({ alive, intervalMs: 100 });

function environment(): Record<string, string> {
  return {
    ...awsEnvironment(stack().aws),
    DATABASE_URL: databaseUrl,
    OPS_HOST: "127.0.0.1",
    OPS_PORT: "0",
    LOG_LEVEL: "info",
    CONSUMER_QUEUE_URL: resources.queueUrl,
    CONSUMER_DLQ_URL: resources.dlqUrl,
    // Short long polls, so that a stop does not wait out one of 10 s.
    CONSUMER_WAIT_TIME_SECONDS: "1",
    RELAY_TOPIC_ARNS: `orders=${resources.topicArn}`,
  };
}

const effects = () =>
  database.db
    .withTables<Pick<AppDatabase, "order_totals">>()
    .selectFrom("order_totals")
    .select(["event_id", "order_id"])
    .execute();

const inboxRows = async () =>
  (
    await sql<{
      count: string;
    }>`SELECT count(*) AS count FROM inbox WHERE consumer = ${CONSUMER_NAME}`.execute(database.db)
  ).rows[0]?.count;

describe("@outbox/consumer and @outbox/relay, packed and run from an application's own entry point", () => {
  it("runs its handlers (with their own dependency), stops on SIGTERM with exit 0 and applies each event once", async () => {
    const orders = (from: number, count: number) =>
      Array.from({ length: count }, (_, index) => ({
        topic: "orders",
        eventType: "order.placed",
        payload: { orderId: `order-${from + index}`, totalCents: 100 + index },
      }));
    const early = await enqueue(database.db, [
      ...orders(0, EVENTS - LATE_EVENTS),
      // Poison two ways: refused by the handler's zod schema, and by the handler itself.
      { topic: "orders", eventType: "order.placed", payload: { orderId: "", totalCents: -1 } },
      { topic: "orders", eventType: "order.placed", payload: { orderId: "blocked-1", totalCents: 5 } },
    ]);
    const relay = startApp("relay-main.js", environment());
    const first = startApp("consumer-main.js", environment());

    // A stop while events are still arriving: what the first run leaves, the second one finishes,
    // with the events enqueued while no consumer ran.
    await waitUntil("the first effects", async () => (await effects()).length >= 5, watching([relay, first]));
    const [firstDrained] = await expectCleanStops([first]);
    expect(firstDrained).toMatchObject({ clean: true });
    const late = await enqueue(database.db, orders(EVENTS - LATE_EVENTS, LATE_EVENTS));
    const ids = [...early.slice(0, EVENTS - LATE_EVENTS), ...late];

    const second = startApp("consumer-main.js", environment());
    await waitUntil(
      "every effect",
      async () => (await effects()).length >= EVENTS,
      watching([relay, second]),
    );
    const dlq = await deadLetters(2, [relay, second]);
    const [, secondDrained] = await expectCleanStops([relay, second]);
    expect(secondDrained).toMatchObject({ clean: true });
    expect(Number(secondDrained?.processed)).toBeGreaterThanOrEqual(LATE_EVENTS);

    const applied = await effects();
    expect(applied).toHaveLength(EVENTS);
    expect(new Set(applied.map((row) => row.event_id))).toEqual(new Set(ids));
    expect(await inboxRows()).toBe(String(EVENTS));
    // Both poison messages in the DLQ from their first receive, each with its reason.
    expect(
      dlq
        .map((message) => [
          message.attributes.poison_reason?.split(":")[0],
          message.attributes.poison_receive_count,
        ])
        .sort(),
    ).toEqual([
      ["payload_rejected", "1"],
      ["rejected_by_handler", "1"],
    ]);
  }, 240_000);

  it(
    "refuses a handlers module beside the handlers given in code, in one line, exit 78",
    async () => {
      const refused = startApp("consumer-main.js", {
        ...environment(),
        CONSUMER_HANDLERS_MODULE: path.join(app, "dist/order-handlers.js"),
      });
      expect(await refused.exited).toEqual({ code: 78, signal: null });
      expect(refused.stderr().trim().split("\n")).toEqual([
        "consumer: config error: CONSUMER_HANDLERS_MODULE: is set, but runConsumer was given its handlers: unset it, so one set of handlers runs",
      ]);
    },
    hangLimit({ processStart: 1 }),
  );
});

/** The DLQ's messages, once `count` have arrived. */
async function deadLetters(count: number, alive: readonly BuiltEntryProcess[]) {
  const { sqs } = awsClients();
  try {
    return await drainUntil(sqs, resources.dlqUrl, count, watching(alive));
  } finally {
    sqs.destroy();
  }
}
