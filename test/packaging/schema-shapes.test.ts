import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { migrateToLatest } from "@outbox/client";
import { createTestDatabase, hangLimit } from "@outbox/test-kit";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedCopy, installScratchApp, type Packed } from "./pack-check.js";
import { packedNamed, packedPublishable } from "./packed-once.js";

/**
 * @outbox/client, packed with `pnpm pack` and installed offline from the tarball, in two throwaway
 * applications that are not shaped like ours: one whose schema type is kysely-codegen's output for
 * its migrated database, one on plain `pg` that migrates with the package's SQL files. Each is
 * type-checked under `strict` and `nodenext` and run against Postgres. Their code includes the
 * examples of the client README's ```typescript blocks and docs/consumer.md's handlers, verbatim
 * (client-package.test.ts compiles the README's ```ts blocks). Third-party packages are linked to
 * the workspace's copies, so nothing is fetched and the lockfile decides every version.
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const clientDir = path.join(root, "packages/client");
const fixtures = fileURLToPath(new URL("fixtures/", import.meta.url));
const tsc = path.join(root, "node_modules/typescript/bin/tsc");
/** The current major (what `npm i typescript` installs), checked beside 5.x: the app must compile with both. */
const tsc7 = path.join(root, "node_modules/typescript-7/bin/tsc");
const codegenBin = path.join(root, "test/node_modules/.bin/kysely-codegen");
/** The README's orders table, as its own migration creates it. */
const ORDERS_TABLE = "CREATE TABLE orders (id text PRIMARY KEY, total_cents integer NOT NULL)";

let temp: string;
let client: Packed;
const projectOf = (name: string) => path.join(temp, name);

/** A document's fenced blocks of one language, in order. */
function blocks(file: string, language: string): string[] {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map(
    (m) => m[1] ?? "",
  );
}

/** The ends of the peer range; 0.29 is test/package.json's `kysely-0.29` alias. */
const kyselies = [
  { kysely: "0.28", from: "kysely" },
  { kysely: "0.29", from: "kysely-0.29" },
] as const;

async function installProject(
  name: string,
  kyselyFrom: string,
  links: Record<string, string>,
  files: Record<string, string>,
  compiled: readonly string[],
): Promise<void> {
  const project = projectOf(name);
  const shared = path.join(root, "packages/shared");
  await installScratchApp(
    root,
    project,
    [client],
    {
      // A required peer even for an application that never imports it (the statement's compiler).
      kysely: installedCopy(root, kyselyFrom, []),
      pg: installedCopy(root, "pg", [shared]),
      "@types/node": installedCopy(root, "@types/node", []),
      "@types/pg": installedCopy(root, "@types/pg", [shared]),
      ...links,
    },
    path.join(temp, "store"),
  );
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2023", "DOM"],
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        skipLibCheck: false,
        types: ["node"],
        outDir: "dist",
      },
      files: compiled,
    }),
  );
  for (const [file, from] of Object.entries(files)) fs.copyFileSync(from, path.join(project, file));
}

/** A fresh database with the outbox's migrations (kysely's) and the README's orders table. */
async function migratedDatabase(label: string, orders: boolean): Promise<string> {
  const url = await createTestDatabase(label);
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  try {
    await migrateToLatest(db);
    if (orders) await sql.raw(ORDERS_TABLE).execute(db);
  } finally {
    await db.destroy();
  }
  return url;
}

/** kysely-codegen's output for the database, as its CLI writes it. */
async function generatedTypes(url: string, outFile: string): Promise<string> {
  await run(codegenBin, ["--dialect", "postgres", "--url", url, "--out-file", outFile], { cwd: temp });
  return fs.readFileSync(outFile, "utf8");
}

/** Each codegen app's database, by kysely version: its run writes rows of its own. */
const codegenUrls = new Map<string, string>();

beforeAll(
  async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-schema-shapes-"));
    client = packedNamed(await packedPublishable(root), "@outbox/client");

    for (const { kysely, from } of kyselies) {
      const url = await migratedDatabase(`schema_shapes_codegen_${kysely.replace(".", "_")}`, true);
      codegenUrls.set(kysely, url);
      const project = `app-codegen-${kysely}`;
      await installProject(
        project,
        from,
        {
          // docs/consumer.md's handlers parse with zod.
          zod: installedCopy(root, "zod", []),
        },
        {
          "codegen-app.ts": path.join(fixtures, "schema-shapes/codegen-app.ts"),
          "cancel-order.ts": path.join(fixtures, "schema-shapes/cancel-order.ts"),
          "orders.ts": path.join(fixtures, "orders.ts"),
          "consumer-handlers.ts": path.join(fixtures, "consumer-handlers.ts"),
        },
        ["codegen-app.ts", "consumer-handlers.ts"],
      );
      await generatedTypes(url, path.join(projectOf(project), "db.d.ts"));
    }
    await installProject(
      "app-pg",
      "kysely",
      {},
      {
        "pg-app.ts": path.join(fixtures, "schema-shapes/pg-app.ts"),
        "place-order.ts": path.join(fixtures, "schema-shapes/place-order.ts"),
      },
      ["pg-app.ts"],
    );
    // The run's pack (or the wait for it), three installs, two codegen runs.
  },
  hangLimit({ pack: 1, install: 3, processStart: 2 }),
);

afterAll(() => {
  if (temp) fs.rmSync(temp, { recursive: true, force: true });
});

describe("@outbox/client in applications shaped otherwise", () => {
  it("compiles exactly the docs' examples: the README's ```typescript blocks, docs/consumer.md's handlers", () => {
    const read = (file: string) => fs.readFileSync(path.join(fixtures, file), "utf8");
    expect([read("schema-shapes/cancel-order.ts"), read("schema-shapes/place-order.ts")]).toEqual(
      blocks("packages/client/README.md", "typescript"),
    );
    expect(blocks("docs/consumer.md", "ts").filter((block) => block.includes("defineHandlers<"))).toEqual([
      read("consumer-handlers.ts"),
    ]);
  });

  it("ships the SQL migrations", async () => {
    const { stdout } = await run("tar", ["-tzf", client.tarball]);
    const shipped = stdout.split("\n").filter((file) => file.startsWith("package/sql/"));
    expect(shipped.map((file) => path.basename(file)).sort()).toEqual(
      fs.readdirSync(path.join(clientDir, "sql")).sort(),
    );
  });

  describe.each(kyselies)("a schema type generated by kysely-codegen, on kysely $kysely", ({ kysely }) => {
    const project = () => projectOf(`app-codegen-${kysely}`);

    // When a migration or kysely-codegen changes it, copy the generated db.d.ts over the fixture
    // (kysely-codegen --dialect postgres --out-file …, on a database migrated as migratedDatabase does).
    it("is the committed fixture the workspace type-checks against, verbatim", async () => {
      const generated = fs.readFileSync(path.join(project(), "db.d.ts"), "utf8");
      expect(generated).toEqual(fs.readFileSync(path.join(fixtures, "schema-shapes/db.d.ts"), "utf8"));
      // Not a schema of our own spelling: codegen's column types are what enqueue must take.
      expect(generated).toMatch(/available_at: Generated<Timestamp>;/);
      expect(generated).toMatch(/payload: Json;/);
      expect(generated).toMatch(/seq: Generated<Int8>;/);
    });

    it("type-checks under nodenext (TypeScript 5 and 7): enqueue, enqueueWith, the handler's Transaction, and each misuse refused", {
      timeout: hangLimit({ compile: 3 }),
    }, async () => {
      await expect(
        run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project() }),
      ).resolves.toBeDefined();
      await expect(
        run(process.execPath, [tsc7, "-p", "tsconfig.json", "--noEmit"], { cwd: project() }),
      ).resolves.toBeDefined();
      // The misuse lines fail to compile for the reasons they name: with their expect-error
      // directives taken out, each is an error, the reason in its message.
      const app = path.join(project(), "codegen-app.ts");
      const source = fs.readFileSync(app, "utf8");
      // Spelled in two parts, or the compiler would take this line for the directive itself.
      const directive = ["// @ts", "expect-error"].join("-");
      fs.writeFileSync(app, source.replaceAll(directive, "// expected:"));
      try {
        const failed = await run(process.execPath, [tsc, "-p", "tsconfig.json", "--noEmit"], {
          cwd: project(),
        }).then(
          () => "",
          (error: { stdout: string }) => error.stdout,
        );
        const errors = failed.split("\n").filter((line) => line.startsWith("codegen-app.ts("));
        expect(errors).toHaveLength(6);
        for (const reason of [
          "it has no outbox table",
          "its outbox table refuses a value enqueue writes",
          "its outbox table lacks a column enqueue writes",
        ]) {
          expect(failed).toContain(reason);
        }
      } finally {
        fs.writeFileSync(app, source);
      }
    });

    it("runs: the rows go into the generated outbox, and the handler writes through its transaction", {
      timeout: hangLimit({ processStart: 1 }),
    }, async () => {
      const { stdout } = await run(process.execPath, ["dist/codegen-app.js"], {
        cwd: project(),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: codegenUrls.get(kysely) },
      });
      const result = JSON.parse(stdout) as { ids: string[]; outbox: unknown[]; orders: unknown[] };
      expect(result.ids).toHaveLength(3);
      expect(result.outbox).toEqual([
        { id: result.ids[0], event_type: "order.placed", payload: { orderId: "42" } },
        { id: result.ids[1], event_type: "order.noted", payload: { orderId: "42" } },
        { id: result.ids[2], event_type: "order.cancelled", payload: { orderId: "42" } },
      ]);
      expect(result.orders).toEqual([{ id: "43", total_cents: 990 }]);
    });
  });

  describe("plain pg, migrated by the SQL files", () => {
    it("type-checks under nodenext (TypeScript 5 and 7) and runs: every file applied and bookkept, enqueuePg in the client's transaction", {
      timeout: hangLimit({ compile: 2, processStart: 1 }),
    }, async () => {
      const project = projectOf("app-pg");
      await run(process.execPath, [tsc7, "-p", "tsconfig.json", "--noEmit"], { cwd: project });
      await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project });
      const url = await createTestDatabase("schema_shapes_pg");
      const { stdout } = await run(process.execPath, ["dist/pg-app.js"], {
        cwd: project,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: url },
      });
      const result = JSON.parse(stdout) as {
        files: string[];
        migrated: string[];
        placed: string;
        rolledBack: string;
      };
      expect(result.files).toEqual(fs.readdirSync(path.join(clientDir, "sql")).sort());
      expect(result.migrated).toEqual(
        result.files.map((file) => file.replace(/^V(\d{4})__(.*)\.sql$/, "$1_$2")),
      );

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(
          "SELECT id, topic, event_type, ordering_key, payload::text AS payload FROM outbox ORDER BY seq",
        );
        expect(rows).toEqual([
          {
            id: result.placed,
            topic: "orders",
            event_type: "order.placed",
            ordering_key: "42",
            payload: '{"orderId":"42","totalCents":1250}',
          },
        ]);
        expect(result.rolledBack).toEqual(expect.any(String));
        const { rows: orders } = await client.query("SELECT id, total_cents FROM orders");
        expect(orders).toEqual([{ id: "42", total_cents: 1250 }]);
      } finally {
        await client.end();
      }
    });
  });
});
