import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createDatabase } from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * @outbox/client as an application outside this repo gets it: packed with `pnpm pack`, installed
 * offline from the tarball into a throwaway project in the OS temp dir, type-checked there under
 * `strict`, and run against Postgres. Third-party packages are linked to the workspace's copies:
 * there is no registry to install them from here.
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const clientDir = path.join(root, "packages/client");
const installed = (from: string, name: string) =>
  fs.realpathSync(path.join(root, from, "node_modules", name));
let temp: string;
let project: string;
let tarball: string;

beforeAll(async () => {
  temp = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-client-pack-"));
  // `pnpm pack` builds through the package's prepack script, so the tarball holds the current sources.
  await run("pnpm", ["pack", "--pack-destination", temp], { cwd: clientDir });
  const [packed] = fs.readdirSync(temp).filter((name) => name.endsWith(".tgz"));
  if (packed === undefined) throw new Error(`pnpm pack wrote no tarball into ${temp}`);
  tarball = path.join(temp, packed);

  project = path.join(temp, "app");
  fs.mkdirSync(project);
  const kysely = `link:${installed("packages/client", "kysely")}`;
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
      },
      // The tarball's own kysely dependency, onto the same linked copy: offline, nothing else resolves it.
      pnpm: { overrides: { kysely } },
    }),
  );
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2023"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        // The package's declarations are checked too: a type it ships broken fails here.
        skipLibCheck: false,
        types: ["node"],
        outDir: "dist",
      },
      files: ["app.ts"],
    }),
  );
  fs.copyFileSync(new URL("fixtures/app.ts", import.meta.url), path.join(project, "app.ts"));
  await run("pnpm", ["install", "--offline", "--store-dir", path.join(temp, "store")], {
    cwd: project,
    env: { ...process.env, CI: "true", npm_config_cache_dir: path.join(temp, "cache") },
  });
}, 180_000);

afterAll(() => {
  if (temp) fs.rmSync(temp, { recursive: true, force: true });
});

describe("@outbox/client, packed and installed outside the workspace", () => {
  it("ships compiled JS and declarations only, and depends on kysely alone", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.split("\n").filter((line) => line !== "");
    expect(files).toContain("package/dist/index.js");
    expect(files).toContain("package/dist/index.d.ts");
    expect(files.filter((file) => !file.startsWith("package/dist/"))).toEqual(["package/package.json"]);
    const manifest = JSON.parse(
      fs.readFileSync(path.join(project, "node_modules/@outbox/client/package.json"), "utf8"),
    ) as { private?: boolean; dependencies?: Record<string, string>; exports: Record<string, unknown> };
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(["kysely"]);
    // Not installed: the OpenTelemetry API is an optional peer, and the run below goes without it.
    expect(fs.existsSync(path.join(project, "node_modules/@opentelemetry"))).toBe(false);
  });

  it("type-checks an application's enqueue and handler under strict", async () => {
    const tsc = path.join(root, "node_modules/typescript/bin/tsc");
    await expect(
      run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }),
    ).resolves.toBeDefined();
  });

  it("runs it: migrations, an enqueue in a transaction, and a handler", async () => {
    const url = await createTestDatabase("client_package");
    const { stdout } = await run(process.execPath, ["dist/app.js"], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: url },
    });
    const result = JSON.parse(stdout) as {
      id: string;
      handled: string[];
      poison: boolean;
      unknownType: boolean;
    };
    expect(result).toEqual({ id: expect.any(String), handled: ["42"], poison: true, unknownType: true });

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
        ordering_key: "order-42",
        payload: { orderId: "42" },
        headers: {},
        published_at: null,
      });
    } finally {
      await database.close(5_000);
    }
  });
});
