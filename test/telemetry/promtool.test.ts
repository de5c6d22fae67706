import { spawn, spawnSync } from "node:child_process";
import { migrateApiTables } from "@outbox/api";
import {
  type BootstrappedResources,
  bootstrapResources,
  type EquipmentStub,
  startEquipmentStub,
} from "@outbox/devstack";
import { apiEnv, consumerEnv, relayEnv } from "@outbox/drills";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase, DaemonFleet, stack, uniqueName, waitUntil } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Prometheus's linter on what each daemon's /metrics says after traffic, asked as Prometheus asks
// (OpenMetrics preferred) and as a plain text-format scraper does. promtool is Debian's `prometheus`
// package; .ci/run installs it, so in CI its absence is a failure, not a skip.
const PROMTOOL_MISSING = spawnSync("promtool", ["--version"]).error !== undefined;
const IN_CI = process.env.CI === "true";

/** Prometheus's own scrape Accept header, and a scraper that only reads the text format. */
const SCRAPES = {
  openmetrics:
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
  text: "text/plain;version=0.0.4",
} as const;

const POSTS = 3;
/** A bound on start-up and delivery, not a verdict: a loaded machine starts three daemons slowly. */
const START_TIMEOUT_MS = 120_000;

/** `promtool check metrics` on `exposition`: its exit code and what it printed (each problem a line). */
function promtoolCheck(exposition: string): Promise<{ code: number | null; problems: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let problems = "";
    child.stdout.on("data", (chunk: Buffer) => {
      problems += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      problems += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, problems }));
    child.stdin.end(exposition);
  });
}

describe.skipIf(PROMTOOL_MISSING && !IN_CI)("promtool check metrics", () => {
  let handle: DatabaseHandle;
  let databaseUrl: string;
  let resources: BootstrappedResources;
  const fleet = new DaemonFleet();
  let stub: EquipmentStub;

  beforeAll(async () => {
    if (PROMTOOL_MISSING)
      throw new Error(
        "promtool is not on the PATH: install Debian's prometheus package (apt-get install prometheus; .ci/run does)",
      );
    stub = await startEquipmentStub();
    const database = await createMigratedTestDatabase("promtool", { service: "promtool-test", poolMax: 4 });
    handle = database.handle;
    databaseUrl = database.url;
    await migrateApiTables(handle.db);
    resources = await bootstrapResources(stack().aws, { name: uniqueName("promtool"), rawDelivery: true });
  });
  afterAll(async () => {
    await fleet.killAll();
    await stub?.close();
    await handle?.close(5_000);
  });

  it("finds nothing to say about the relay's, the consumer's and the api's /metrics after traffic, in either format", async () => {
    const environment = { stack: stack(), databaseUrl, resources, database: handle, close: async () => {} };
    const daemons = {
      relay: fleet.relay("relay", relayEnv(environment)),
      consumer: fleet.consumer("consumer", consumerEnv(environment, { DRILL_HANDLER_MS: "5" })),
      api: fleet.api("api", apiEnv(environment, stub.url)),
    };
    const opsPorts = Object.fromEntries(
      await Promise.all(
        Object.entries(daemons).map(async ([name, daemon]) => [
          name,
          Number((await daemon.waitForLog("started", {}, START_TIMEOUT_MS)).opsPort),
        ]),
      ),
    ) as Record<keyof typeof daemons, number>;

    // Traffic through all three: posts to the api, their events published by the relay and applied
    // by the consumer.
    const apiPort = Number((await daemons.api.waitForLog("listening", {}, START_TIMEOUT_MS)).port);
    for (let n = 0; n < POSTS; n++) {
      const answer = await fetch(`http://127.0.0.1:${apiPort}/photos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: `promtool #${n}`, gearIds: ["lens-35mm"] }),
      });
      expect(answer.status).toBe(201);
    }
    await waitUntil(
      `${POSTS} events in the inbox`,
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox`.execute(handle.db);
        return rows[0]?.n === POSTS;
      },
      { timeoutMs: START_TIMEOUT_MS },
    );

    const findings: Record<string, unknown> = {};
    for (const [name, port] of Object.entries(opsPorts)) {
      for (const [format, accept] of Object.entries(SCRAPES)) {
        const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { accept } });
        expect(response.status).toBe(200);
        findings[`${name} (${format})`] = await promtoolCheck(await response.text());
      }
    }
    const clean = { code: 0, problems: "" };
    expect(findings).toEqual(Object.fromEntries(Object.keys(findings).map((scrape) => [scrape, clean])));

    for (const daemon of Object.values(daemons)) {
      const exit = await daemon.stop("SIGTERM");
      expect(exit.code, daemon.stderr()).toBe(0);
    }
  }, 480_000);
});
