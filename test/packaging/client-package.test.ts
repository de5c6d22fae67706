import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createDatabase } from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * @outbox/client as an application outside this repo gets it: packed with `pnpm pack`, installed
 * offline from the tarball into throwaway projects in the OS temp dir — one on kysely 0.28, one on
 * 0.29, the ends of the peer range — each type-checked there under `strict` and `nodenext` and run
 * against Postgres. The application has its own schema type and its own kysely migrations, and its
 * code is the package README's examples. Third-party packages are linked to the workspace's copies
 * (kysely 0.29 is test/package.json's `kysely-0.29` alias), so nothing is fetched and the lockfile
 * decides every version.
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const clientDir = path.join(root, "packages/client");
const installed = (from: string, name: string) =>
  fs.realpathSync(path.join(root, from, "node_modules", name));
const kyselies = [
  { kysely: "0.28", from: "kysely" },
  { kysely: "0.29", from: "kysely-0.29" },
] as const;
let temp: string;
let tarball: string;
const projectOf = (kysely: string) => path.join(temp, `app-kysely-${kysely}`);

/** The fixtures that are the package README's ```ts blocks, in the README's order. */
const README_FIXTURES = ["orders.ts", "claim-check.ts", "handlers.ts", "batch-handlers.ts"];

/** The README's ```ts blocks, in order. */
function readmeExamples(): string[] {
  const readme = fs.readFileSync(path.join(clientDir, "README.md"), "utf8");
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}

async function installProject(project: string, kyselyFrom: string): Promise<void> {
  fs.mkdirSync(project);
  const kysely = `link:${installed("test", kyselyFrom)}`;
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({
      name: "outbox-client-consumer",
      private: true,
      type: "module",
      dependencies: {
        "@outbox/client": `file:${tarball}`,
        kysely,
        pg: `link:${installed("packages/shared", "pg")}`,
        "@types/node": `link:${installed("", "@types/node")}`,
        "@types/pg": `link:${installed("packages/shared", "@types/pg")}`,
        // The claim check's optional peer, for the README's claim-check example.
        "@aws-sdk/client-s3": `link:${installed("test", "@aws-sdk/client-s3")}`,
      },
    }),
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
        // The package's declarations are checked too: a type it ships broken fails here.
        skipLibCheck: false,
        types: ["node"],
        outDir: "dist",
      },
      // app.ts runs (and imports the other examples); claim-check.ts and batch-handlers.ts are
      // type-checked only: the first needs S3, the second a consumer to run it.
      files: ["app.ts", "claim-check.ts", "batch-handlers.ts"],
    }),
  );
  for (const file of ["app.ts", ...README_FIXTURES]) {
    fs.copyFileSync(new URL(`fixtures/${file}`, import.meta.url), path.join(project, file));
  }
  await run("pnpm", ["install", "--offline", "--store-dir", path.join(temp, "store")], {
    cwd: project,
    env: { ...process.env, CI: "true", npm_config_cache_dir: path.join(temp, "cache") },
  });
}

beforeAll(async () => {
  temp = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-client-pack-"));
  // `pnpm pack` builds through the package's prepack script, so the tarball holds the current sources.
  await run("pnpm", ["pack", "--pack-destination", temp], { cwd: clientDir });
  const [packed] = fs.readdirSync(temp).filter((name) => name.endsWith(".tgz"));
  if (packed === undefined) throw new Error(`pnpm pack wrote no tarball into ${temp}`);
  tarball = path.join(temp, packed);
  for (const { kysely, from } of kyselies) await installProject(projectOf(kysely), from);
}, 240_000);

afterAll(() => {
  if (temp) fs.rmSync(temp, { recursive: true, force: true });
});

describe("@outbox/client, packed and installed outside the workspace", () => {
  it("ships compiled JS, declarations, README and LICENSE, no source maps, and takes kysely as a peer", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.split("\n").filter((line) => line !== "");
    expect(files).toContain("package/dist/index.js");
    expect(files).toContain("package/dist/index.d.ts");
    // package/sql/: the migrations as plain SQL files (test/packaging/schema-shapes.test.ts).
    const outside = files.filter(
      (file) => !file.startsWith("package/dist/") && !file.startsWith("package/sql/"),
    );
    expect(outside.sort()).toEqual(["package/LICENSE", "package/README.md", "package/package.json"]);
    // A map would point at src/, which is not shipped.
    expect(files.filter((file) => file.endsWith(".map"))).toEqual([]);
    const manifest = JSON.parse(
      fs.readFileSync(path.join(projectOf("0.28"), "node_modules/@outbox/client/package.json"), "utf8"),
    ) as {
      private?: boolean;
      license?: string;
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    expect(manifest.private).toBeUndefined();
    expect(manifest.license).toBe("MIT");
    expect(Object.keys(manifest.dependencies ?? {})).toEqual([]);
    expect(manifest.peerDependencies?.kysely).toBe(">=0.28.19 <0.30");
    // Not installed: the OpenTelemetry API is an optional peer, and the runs below go without it.
    expect(fs.existsSync(path.join(projectOf("0.28"), "node_modules/@opentelemetry"))).toBe(false);
  });

  it("compiles exactly the README's examples", () => {
    const fixtures = README_FIXTURES.map((file) =>
      fs.readFileSync(new URL(`fixtures/${file}`, import.meta.url), "utf8"),
    );
    expect(fixtures).toEqual(readmeExamples());
  });

  describe.each(kyselies)("on kysely $kysely", ({ kysely }) => {
    it("uses the application's kysely, the one copy, and type-checks the README's code under nodenext", async () => {
      const project = projectOf(kysely);
      const version = (
        JSON.parse(fs.readFileSync(path.join(project, "node_modules/kysely/package.json"), "utf8")) as {
          version: string;
        }
      ).version;
      expect(version.startsWith(`${kysely}.`)).toBe(true);
      const tsc = path.join(root, "node_modules/typescript/bin/tsc");
      await expect(
        run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }),
      ).resolves.toBeDefined();
    });

    it("runs it: the app's migrations before and after the outbox's, an enqueue in its transaction, a handler", async () => {
      const url = await createTestDatabase(`client_package_${kysely.replace(".", "_")}`);
      const { stdout } = await run(process.execPath, ["dist/app.js"], {
        cwd: projectOf(kysely),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: url },
      });
      const result = JSON.parse(stdout) as Record<string, unknown>;
      expect(result).toEqual({
        id: expect.any(String),
        appliedAfter: ["2026_02_orders_note"],
        pending: [],
        order: { id: "42", total_cents: 1300 },
        poison: true,
        unknownType: true,
      });

      const database = createDatabase({
        url,
        service: "client-package-test",
        poolMax: 1,
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 10_000,
      });
      try {
        const row = await database.db
          .selectFrom("outbox")
          .select(["id", "topic", "event_type", "ordering_key", "payload", "headers", "published_at"])
          .executeTakeFirstOrThrow();
        expect(row).toEqual({
          id: result.id,
          topic: "orders",
          event_type: "order.placed",
          ordering_key: "42",
          payload: { orderId: "42", totalCents: 1250 },
          headers: {},
          published_at: null,
        });
        // Each set in its own bookkeeping: the app's in kysely's default table, ours in outbox_migration.
        const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(
          database.db,
        );
        expect(rows.map((r) => r.name)).toEqual(["2026_01_orders", "2026_02_orders_note"]);
      } finally {
        await database.close(5_000);
      }
    });
  });
});
