import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { migrateToLatest, migrations, pendingMigrations } from "@outbox/client";
import { createTestDatabase, hangLimit } from "@outbox/test-kit";
import { Kysely, PostgresDialect, type RawBuilder, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

/**
 * packages/client/sql, the outbox's migrations as plain SQL files for Flyway and the like, against
 * the kysely migrations they are made from: one fresh database migrated each way (and a third by the
 * files up to 0010, then migrateToLatest) must end with the same catalog, and the files must be what
 * the generating script makes of the migrations today.
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const sqlDir = path.join(root, "packages/client/sql");
const sqlFiles = () =>
  fs
    .readdirSync(sqlDir)
    .filter((file) => file.endsWith(".sql"))
    .sort();

const databases: Kysely<unknown>[] = [];
function open(url: string): Kysely<unknown> {
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  databases.push(db);
  return db;
}

/** Applies the files as a migration tool does: in name order, each in a transaction of its own. */
async function applyFiles(url: string, files: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const file of files) {
      await client.query("BEGIN");
      await client.query(fs.readFileSync(path.join(sqlDir, file), "utf8"));
      await client.query("COMMIT");
    }
  } finally {
    await client.end();
  }
}

/** Everything the migrations create in the schema, each kind in a stable order. */
async function catalog(db: Kysely<unknown>) {
  type Row = Record<string, unknown>;
  const rows = async (query: RawBuilder<unknown>) => (await (query as RawBuilder<Row>).execute(db)).rows;
  return {
    // Tables, indexes and sequences, with their storage options (fillfactor).
    relations: await rows(sql`
      SELECT c.relname, c.relkind, c.reloptions FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' ORDER BY c.relname`),
    columns: await rows(sql`
      SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default,
             is_identity, identity_generation, is_generated, character_maximum_length
        FROM information_schema.columns WHERE table_schema = 'public'
       ORDER BY table_name, ordinal_position`),
    indexes: await rows(sql`
      SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`),
    constraints: await rows(sql`
      SELECT conrelid::regclass::text AS relation, conname, pg_get_constraintdef(c.oid) AS definition
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
       WHERE n.nspname = 'public' ORDER BY relation, conname`),
    triggers: await rows(sql`
      SELECT tgname, pg_get_triggerdef(t.oid) AS definition FROM pg_trigger t
       WHERE NOT tgisinternal ORDER BY tgname`),
    // The definition holds the body's text, so the same function written differently differs.
    functions: await rows(sql`
      SELECT proname, pg_get_functiondef(p.oid) AS definition FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public' ORDER BY proname`),
    sequences: await rows(sql`
      SELECT sequencename, data_type, start_value, increment_by, max_value, cycle
        FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename`),
    bookkeeping: await rows(sql`SELECT name FROM outbox_migration ORDER BY name`),
    locks: await rows(sql`SELECT id, is_locked FROM outbox_migration_lock`),
  };
}

let viaKysely: Kysely<unknown>;
let viaFiles: Kysely<unknown>;
let viaBoth: Kysely<unknown>;

beforeAll(async () => {
  const [kyselyUrl, filesUrl, bothUrl] = await Promise.all(
    ["sql_migrations_kysely", "sql_migrations_files", "sql_migrations_both"].map(createTestDatabase),
  );
  viaKysely = open(kyselyUrl ?? "");
  await migrateToLatest(viaKysely);
  await applyFiles(filesUrl ?? "", sqlFiles());
  viaFiles = open(filesUrl ?? "");
  await applyFiles(
    bothUrl ?? "",
    sqlFiles().filter((file) => file < "V0011"),
  );
  viaBoth = open(bothUrl ?? "");
});
afterAll(async () => {
  await Promise.all(databases.map((db) => db.destroy()));
});

describe("the outbox's migrations as plain SQL files", () => {
  it("are one file per kysely migration, in its order, named as Flyway versions them", () => {
    expect(sqlFiles()).toEqual(
      Object.keys(migrations).map((name) => `V${name.replace(/^(\d{4})_/, "$1__")}.sql`),
    );
    expect(sqlFiles().every((file) => /^V\d{4}__[a-z0-9_]+\.sql$/.test(file))).toBe(true);
  });

  it("are what the script makes of the kysely migrations today", async () => {
    const tsx = path.join(root, "node_modules/tsx/dist/cli.mjs");
    const script = path.join(root, "packages/client/scripts/write-sql-migrations.ts");
    await expect(
      run(process.execPath, [tsx, "--conditions=development", script, "--check"], { cwd: root }),
    ).resolves.toBeDefined();
  });

  it("build the catalog the kysely migrations build: tables, columns, defaults, indexes, constraints, triggers, functions", async () => {
    const expected = await catalog(viaKysely);
    // Not vacuous: the comparison covers what the migrations made.
    expect(expected.relations).toContainEqual({
      relname: "outbox",
      relkind: "r",
      reloptions: ["fillfactor=70"],
    });
    expect(expected.triggers.map((trigger) => trigger.tgname)).toEqual([
      "outbox_inserted",
      "outbox_key_turn",
    ]);
    expect(expected.functions.map((fn) => fn.proname)).toEqual(["outbox_key_turn", "outbox_notify_inserted"]);
    expect(expected.bookkeeping).toHaveLength(Object.keys(migrations).length);
    expect(await catalog(viaFiles)).toEqual(expected);
  });

  it("bookkeep as migrateToLatest does: nothing pending after them, and migrateToLatest continues where they stopped", async () => {
    expect(await pendingMigrations(viaFiles)).toEqual([]);
    expect(await migrateToLatest(viaFiles)).toEqual([]);
    const later = Object.keys(migrations).filter((name) => name > "0011");
    expect(await pendingMigrations(viaBoth)).toEqual(later);
    const applied = await migrateToLatest(viaBoth);
    expect(applied.map((result) => [result.migrationName, result.status])).toEqual(
      later.map((name) => [name, "Success"]),
    );
    expect(await catalog(viaBoth)).toEqual(await catalog(viaKysely));
  });
});
