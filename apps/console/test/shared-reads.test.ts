import type { OutboxTables } from "@outbox/client";
import type { DatabaseHandle } from "@outbox/shared";
import { capturingLogger, createMigratedTestDatabase } from "@outbox/test-kit";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SharedReads } from "../src/reads/shared-reads.js";
import { type ConsoleServer, createConsoleServer } from "../src/server.js";

/*
 * Tabs share the console's reads: N requests of a view at once send one view's statements, and
 * requests within the refresh period send none. Counted as the statements the console sends (the
 * database is a real one, the counts do not depend on its speed).
 */
const VIEWS = ["/", "/blocked-keys", "/dead-rows", "/replays"] as const;
const TABS = 10;

let handle: DatabaseHandle;
let pool: pg.Pool;
let db: Kysely<OutboxTables>;
const servers: ConsoleServer[] = [];
const sent: string[] = [];

beforeAll(async () => {
  let url: string;
  ({ url, handle } = await createMigratedTestDatabase("console_shared", { service: "console-test" }));
  pool = new pg.Pool({ connectionString: url, max: 6 });
  await pool.query(`
    INSERT INTO outbox (id, topic, ordering_key, event_type, payload, attempts, dead_at, last_error)
    SELECT gen_random_uuid(), 'orders', 'key-' || n, 'order.placed', '{}'::json, 5, now(),
           'KMSDisabled: key disabled'
    FROM generate_series(1, 5) AS n
  `);
  db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === "query") sent.push(event.query.sql);
    },
  });
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await pool?.end();
  await handle?.close(5_000);
});

/** A console of its own (nothing kept yet) on the counted database; resolves with its URL. */
async function startConsole(): Promise<string> {
  const server = createConsoleServer({
    db,
    desk: null,
    replays: null,
    log: capturingLogger().log,
    assets: new Map(),
    credentials: { token: "", operators: [] },
    readOnly: true,
    claimCheckSendWithinHours: 0,
    // Longer than the test: what is kept stays fresh throughout.
    refreshSeconds: 600,
  });
  servers.push(server);
  return `http://127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
}

/** The statements `tabs` requests of `path` at once send. */
async function statementsOf(base: string, path: string, tabs: number, refresh = false): Promise<number> {
  sent.length = 0;
  const answers = await Promise.all(
    Array.from({ length: tabs }, () =>
      fetch(new URL(path, base), { headers: refresh ? { "x-console-refresh": "1" } : {} }),
    ),
  );
  await Promise.all(answers.map((answer) => answer.text()));
  expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  return sent.length;
}

describe("the console's reads, shared by its tabs", () => {
  for (const view of VIEWS) {
    it(`${view}: ${TABS} tabs at once send one request's statements; their refreshes within the period none`, async () => {
      const one = await statementsOf(await startConsole(), view, 1);
      expect(one).toBeGreaterThan(0);
      const base = await startConsole();
      expect(await statementsOf(base, view, TABS)).toBe(one);
      expect(await statementsOf(base, view, TABS, true)).toBe(0);
    });
  }

  it("the dead rows are kept per filter: another filter is read, the same one is not", async () => {
    const base = await startConsole();
    const one = await statementsOf(base, "/dead-rows", 1);
    expect(await statementsOf(base, "/dead-rows?topic=orders", TABS)).toBe(one);
    expect(await statementsOf(base, "/dead-rows?topic=orders", TABS)).toBe(0);
    expect(await statementsOf(base, "/dead-rows", TABS)).toBe(0);
  });
});

describe("SharedReads", () => {
  it("shares a read in flight, keeps it for the period, then reads again", async () => {
    let now = 0;
    let reads = 0;
    const shared = new SharedReads(5_000, () => now);
    const read = async () => {
      reads += 1;
      return reads;
    };
    expect(await Promise.all([shared.read("v", read), shared.read("v", read)])).toEqual([1, 1]);
    now = 4_999;
    expect(await shared.read("v", read)).toBe(1);
    now = 5_000;
    expect(await shared.read("v", read)).toBe(2);
    shared.forget();
    expect(await shared.read("v", read)).toBe(3);
  });

  it("does not keep a failed read: its waiters share the error, the next request reads again", async () => {
    const shared = new SharedReads(5_000, () => 0);
    let reads = 0;
    const failing = async () => {
      reads += 1;
      throw new Error("database down");
    };
    const both = await Promise.allSettled([shared.read("v", failing), shared.read("v", failing)]);
    expect(both.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    expect(reads).toBe(1);
    await expect(shared.read("v", async () => "back")).resolves.toBe("back");
  });
});
