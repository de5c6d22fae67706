import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_METRICS, createApiMetrics } from "../src/index.js";
import { createDatabase, createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";

// The metrics read through a pool of their own, so every statement they run is counted here.
let database: DatabaseHandle;
let metricsDatabase: DatabaseHandle;
let statements = 0;
beforeAll(async () => {
  const created = await createMigratedTestDatabase("api_gauge", { service: "api-test", poolMax: 4 });
  database = created.handle;
  metricsDatabase = createDatabase({
    url: created.url,
    service: "api-gauge-test",
    poolMax: 10,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  metricsDatabase.pool.on("acquire", () => {
    statements += 1;
  });
});
afterAll(async () => {
  await metricsDatabase.close(5_000);
  await database.close(5_000);
});

async function addPendingLink(): Promise<void> {
  const id = crypto.randomUUID();
  await database.db.insertInto("photos").values({ id, title: "pending" }).execute();
  await database.db
    .insertInto("photo_gear_links")
    .values({ photo_id: id, gear_ids: JSON.stringify(["g"]), state: "pending" })
    .execute();
}

function pendingIn(exposition: string): number {
  const line = exposition.split("\n").find((text) => text.startsWith(`${API_METRICS.gearLinksPending} `));
  return Number(line?.split(" ")[1]);
}

describe("api_gear_links_pending", () => {
  it("300 concurrent scrapes run one count, and a later scrape counts again", async () => {
    const registry = new Registry();
    createApiMetrics(registry, metricsDatabase.db);
    await addPendingLink();
    const before = statements;
    const scrapes = await Promise.all(Array.from({ length: 300 }, () => registry.metrics()));
    expect(statements - before).toBe(1);
    expect(new Set(scrapes.map(pendingIn))).toEqual(new Set([1]));

    await addPendingLink();
    // Once the shared read is let go, a scrape sees the table as it is now.
    await expect.poll(async () => pendingIn(await registry.metrics()), { timeout: 10_000 }).toBe(2);
  });
});
