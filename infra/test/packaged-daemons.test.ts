import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { enqueue, migrateToLatest } from "@outbox/client";
import { awsEnvironment, bootstrapResources } from "@outbox/devstack";
import type { ExampleEffectsTable } from "@outbox/example-handlers";
import { createDatabase, type DatabaseHandle, migrateExampleTables } from "@outbox/shared";
import {
  awsClients,
  type BuiltEntryProcess,
  createTestDatabase,
  drainUntil,
  expectCleanStops,
  hangLimit,
  stack,
  uniqueName,
  type WaitOptions,
  waitUntil,
} from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumerBudget, relayBudget } from "../lib/budget.js";
import { bundleHandlers } from "./support/bundle-handlers.js";
import { packageDaemons, startPackaged } from "./support/packaged.js";
import { container, synth } from "./support/synth.js";

/**
 * The images' contents without Docker: the Dockerfile's packaging script, into a temporary directory, then each daemon started with plain `node dist/main.js` against the local
 * stack, driven end to end (outbox row → relay → SNS → SQS → consumer → inbox) and stopped by SIGTERM.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const apps = ["relay", "consumer"] as const;
/** Where the bundled handlers module sits in the consumer's package, as a team's image would hold it. */
const BUNDLED_HANDLERS = "handlers/bundled-handlers.mjs";
let out: string;
let database: DatabaseHandle;
let databaseUrl: string;
let resources: Awaited<ReturnType<typeof bootstrapResources>>;
const running: BuiltEntryProcess[] = [];

/** The example handlers' effect of one event, once there is one. */
async function effectOf(eventId: string) {
  return (
    (await database.db
      .withTables<{ example_effects: ExampleEffectsTable }>()
      .selectFrom("example_effects")
      .selectAll()
      .where("event_id", "=", eventId)
      .executeTakeFirst()) ?? undefined
  );
}

beforeAll(
  async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-packaged-"));
    // The Dockerfile's own packaging step, with an empty pnpm metadata cache: it must work from the
    // lockfile alone, as on a cold builder.
    await packageDaemons(root, out);
    // The daemon has no default handlers: a user's module sits in the package, as in their image.
    fs.copyFileSync(
      new URL("../compose/example-handlers.mjs", import.meta.url),
      path.join(out, "consumer", "packaged-handlers.mjs"),
    );
    // And one with a dependency the image lacks, bundled as docs/deployment.md says, its own
    // @outbox/client (the workspace's, built by the packaging script) inside.
    await bundleHandlers({
      root,
      source: fileURLToPath(new URL("../compose/bundled-handlers.mjs", import.meta.url)),
      outfile: path.join(out, "consumer", BUNDLED_HANDLERS),
      dependencies: { "@outbox/client": "infra", zod: "packages/shared" },
    });
    databaseUrl = await createTestDatabase("infra_packaged");
    database = createDatabase({
      url: databaseUrl,
      service: "infra-test",
      poolMax: 2,
      statementTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 10_000,
    });
    await migrateToLatest(database.db);
    await migrateExampleTables(database.db);
    const budget = consumerBudget({ maxTaskCount: 10 });
    resources = await bootstrapResources(stack().aws, {
      name: uniqueName("infra-packaged"),
      rawDelivery: true,
      visibilityTimeoutSeconds: budget.visibilityTimeoutSeconds,
      maxReceiveCount: budget.maxReceiveCount,
    });
    // The packaging, the handlers' bundle (one esbuild run, a process's start at most).
  },
  hangLimit({ deploy: 1, processStart: 1 }),
);

afterAll(async () => {
  for (const daemon of running) if (daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  await database?.close(5_000);
  if (out) fs.rmSync(out, { recursive: true, force: true });
});

/** A wait of at most 30 s that ends as soon as one of `alive` exits, polling every 100 ms. */
const watching = (alive: readonly BuiltEntryProcess[]): WaitOptions => ({
  alive,
  timeoutMs: 30_000,
  intervalMs: 100,
});

/** What both daemons read: the stack, the database, an ops port of their own. */
function commonEnvironment(): Record<string, string> {
  return {
    ...awsEnvironment(stack().aws),
    DATABASE_URL: databaseUrl,
    OPS_HOST: "127.0.0.1",
    OPS_PORT: "0",
    LOG_LEVEL: "info",
  };
}

function startRelay(): BuiltEntryProcess {
  const relay = relayBudget();
  const daemon = startPackaged(path.join(out, "relay"), {
    ...commonEnvironment(),
    STOP_TIMEOUT_MS: String(relay.stopTimeoutMs),
    SHUTDOWN_OVERHEAD_MS: String(relay.shutdownOverheadMs),
    RELAY_DRAIN_TIMEOUT_MS: String(relay.drainTimeoutMs),
    RELAY_TOPIC_ARNS: `events=${resources.topicArn}`,
  });
  running.push(daemon);
  return daemon;
}

function startConsumer(handlersModule: string): BuiltEntryProcess {
  const consumer = consumerBudget({ maxTaskCount: 10 });
  const daemon = startPackaged(path.join(out, "consumer"), {
    ...commonEnvironment(),
    STOP_TIMEOUT_MS: String(consumer.stopTimeoutMs),
    SHUTDOWN_OVERHEAD_MS: String(consumer.shutdownOverheadMs),
    CONSUMER_DRAIN_TIMEOUT_MS: String(consumer.drainTimeoutMs),
    CONSUMER_WAIT_TIME_SECONDS: "1",
    CONSUMER_VISIBILITY_TIMEOUT_SECONDS: String(consumer.visibilityTimeoutSeconds),
    CONSUMER_QUEUE_URL: resources.queueUrl,
    CONSUMER_DLQ_URL: resources.dlqUrl,
    CONSUMER_HANDLERS_MODULE: handlersModule,
  });
  running.push(daemon);
  return daemon;
}

const logLine = (daemon: BuiltEntryProcess, msg: string) => () =>
  daemon.lines.find((line) => line.msg === msg);

describe("the packaged daemons", () => {
  it("contain dist with source maps and production dependencies only", () => {
    for (const app of apps) {
      const dir = path.join(out, app);
      expect(fs.existsSync(path.join(dir, "dist/main.js"))).toBe(true);
      expect(fs.existsSync(path.join(dir, "dist/main.js.map"))).toBe(true);
      const shared = path.join(dir, "node_modules/@outbox/shared");
      expect(fs.existsSync(path.join(shared, "dist/index.js"))).toBe(true);
      expect(fs.existsSync(path.join(shared, "dist/index.js.map"))).toBe(true);
      const installed = fs.readdirSync(path.join(dir, "node_modules/.pnpm")).join("\n");
      for (const dev of [
        "vitest@",
        "typescript@",
        "tsx@",
        "@biomejs",
        "@outbox+devstack",
        "testcontainers@",
      ]) {
        expect(installed, `${app} ships ${dev}`).not.toContain(dev);
      }
    }
  });

  it("refuses bad configuration with exit 78", async () => {
    const daemon = startPackaged(path.join(out, "relay"), {});
    expect(await daemon.exited).toEqual({ code: 78, signal: null });
    expect(daemon.stderr()).toContain("DATABASE_URL: is required");
  });

  it("relay and consumer run from dist, carry an event end to end, and exit 0 on SIGTERM", async () => {
    const relayDaemon = startRelay();
    const consumerDaemon = startConsumer(path.join(out, "consumer", "packaged-handlers.mjs"));

    const started = await Promise.all(
      [relayDaemon, consumerDaemon].map((daemon) =>
        waitUntil("started", logLine(daemon, "started"), watching([daemon])),
      ),
    );

    // The task definition's own health check command, pointed at the port the daemon picked.
    const { template } = synth();
    for (const [name, line] of [
      ["relay", started[0]],
      ["consumer", started[1]],
    ] as const) {
      const command = (container(template, name).HealthCheck as { Command: string[] }).Command;
      const script = (command[3] ?? "").replace(":9090/", `:${String(line?.opsPort)}/`);
      await expect(
        promisify(execFile)(command[1] ?? "node", [command[2] ?? "-e", script]),
      ).resolves.toBeDefined();
    }

    const [eventId] = await enqueue(database.db, [
      { topic: "events", eventType: "example.created", payload: { name: "packaged" } },
    ]);
    const effect = await waitUntil(
      "the consumer's effect",
      () => effectOf(eventId ?? ""),
      watching([relayDaemon, consumerDaemon]),
    ).catch(async (error: unknown) => {
      // The relay keeps why a publish failed on the row.
      const rows = await database.db.selectFrom("outbox").select(["attempts", "last_error"]).execute();
      throw new Error(`${String(error)}\noutbox: ${JSON.stringify(rows)}`);
    });
    expect(effect.event_type).toBe("example.created");

    await expectCleanStops([relayDaemon, consumerDaemon]);
  }, 90_000);

  it("runs a handlers module bundled with a dependency the image lacks and its own @outbox/client: its poison goes to the DLQ at the first receive", async () => {
    // Unbundled, the module cannot load in the image: zod is not there for it.
    const unbundled = path.join(out, "consumer", "handlers", "unbundled-handlers.mjs");
    fs.copyFileSync(new URL("../compose/bundled-handlers.mjs", import.meta.url), unbundled);
    const refused = startConsumer(unbundled);
    expect(await refused.exited).toEqual({ code: 1, signal: null });
    expect(JSON.stringify(refused.lines.find((line) => line.msg === "start failed"))).toContain(
      "Cannot find package 'zod'",
    );

    const handlersModule = path.join(out, "consumer", BUNDLED_HANDLERS);
    const relayDaemon = startRelay();
    const consumerDaemon = startConsumer(handlersModule);
    const daemons = [relayDaemon, consumerDaemon];
    await Promise.all(
      daemons.map((daemon) => waitUntil("started", logLine(daemon, "started"), watching([daemon]))),
    );

    const [eventId, poisonId] = await enqueue(database.db, [
      { topic: "events", eventType: "example.bundled", payload: { name: "bundled" } },
      { topic: "events", eventType: "example.bundled", payload: { name: "poison" } },
    ]);
    const { sqs } = awsClients();
    const deadLetters = await drainUntil(sqs, resources.dlqUrl, 1, watching(daemons)).finally(() =>
      sqs.destroy(),
    );
    expect(deadLetters.map((message) => message.attributes)).toEqual([
      expect.objectContaining({
        event_id: poisonId,
        poison_reason: "rejected_by_handler: the example refuses this name",
        poison_receive_count: "1",
      }),
    ]);
    const effect = await waitUntil(
      "the bundled handler's effect",
      () => effectOf(eventId ?? ""),
      watching(daemons),
    );
    expect(effect.event_type).toBe("example.bundled");

    await expectCleanStops(daemons);
  }, 90_000);
});
