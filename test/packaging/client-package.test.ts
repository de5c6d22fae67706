import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createDatabase } from "@outbox/shared";
import { createTestDatabase, hangLimit } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compile,
  compilers,
  installedCopy,
  installScratchApp,
  type Packed,
  prepareRelease,
  releaseSteps,
} from "./pack-check.js";
import { packedNamed, packedPublishable } from "./packed-once.js";

/**
 * @outbox/client as an application outside this repo gets it: packed with `pnpm pack`, installed
 * offline from the tarball into throwaway projects in the OS temp dir — one on kysely 0.28, one on
 * 0.29, the ends of the peer range — each compiled there with the tsconfig the package README gives,
 * by TypeScript 5 and 7, and run against Postgres. The application has its own schema type and its
 * own kysely migrations, and its code is the package README's examples. Third-party packages are
 * linked to the workspace's copies (kysely 0.29 is test/package.json's `kysely-0.29` alias), so
 * nothing is fetched and the lockfile decides every version. First, the release check
 * (`pnpm release:check`, pack-check.ts) of every publishable package, in a project of its own.
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const clientDir = path.join(root, "packages/client");
const kyselies = [
  { kysely: "0.28", from: "kysely" },
  { kysely: "0.29", from: "kysely-0.29" },
] as const;
let temp: string;
let release: { packed: readonly Packed[]; app: string };
let client: Packed;
const projectOf = (kysely: string) => path.join(temp, `app-kysely-${kysely}`);

/** The fixtures that are the package README's ```ts blocks, in the README's order. */
const README_FIXTURES = ["orders.ts", "claim-check.ts", "handlers.ts", "batch-handlers.ts"];

const readme = () => fs.readFileSync(path.join(clientDir, "README.md"), "utf8");

/** The README's ```ts blocks, in order. */
function readmeExamples(): string[] {
  return [...readme().matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}

/** The tsconfig.json the README's "Compiling" gives an application. */
function readmeTsconfig(): { compilerOptions: Record<string, unknown> } {
  const [block] = [...readme().matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
  if (block === undefined) throw new Error("the README gives no tsconfig.json");
  return JSON.parse(block) as { compilerOptions: Record<string, unknown> };
}

async function installProject(project: string, kyselyFrom: string): Promise<void> {
  const installed = (from: string, name: string) => installedCopy(root, name, [path.join(root, from)]);
  await installScratchApp(
    root,
    project,
    [client],
    {
      kysely: installed("test", kyselyFrom),
      pg: installed("packages/shared", "pg"),
      "@types/node": installed("", "@types/node"),
      "@types/pg": installed("packages/shared", "@types/pg"),
      // The claim check's optional peer, for the README's claim-check example.
      "@aws-sdk/client-s3": installed("test", "@aws-sdk/client-s3"),
    },
    path.join(temp, "store"),
  );
  const { compilerOptions } = readmeTsconfig();
  fs.writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      // The package's declarations are checked too: a type it ships broken fails here.
      compilerOptions: { ...compilerOptions, skipLibCheck: false },
      // app.ts runs (and imports the other examples); claim-check.ts and batch-handlers.ts are
      // type-checked only: the first needs S3, the second a consumer to run it.
      files: ["app.ts", "claim-check.ts", "batch-handlers.ts"],
    }),
  );
  for (const file of ["app.ts", ...README_FIXTURES]) {
    fs.copyFileSync(new URL(`fixtures/${file}`, import.meta.url), path.join(project, file));
  }
}

beforeAll(
  async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-client-pack-"));
    // `pnpm pack` builds through each package's prepack script, so the tarballs hold the current sources.
    const packed = await packedPublishable(root);
    release = { packed, app: await prepareRelease(root, packed, temp) };
    client = packedNamed(packed, "@outbox/client");
    for (const { kysely, from } of kyselies) await installProject(projectOf(kysely), from);
    // The run's pack (or the wait for it), the release app's install and the two apps'.
  },
  hangLimit({ pack: 1, install: 3 }),
);

afterAll(() => {
  if (temp) fs.rmSync(temp, { recursive: true, force: true });
});

// The release check (`pnpm release:check`), step by step: the steps run in order, in one app.
describe.each(releaseSteps(root))(
  "every publishable package, packed and installed outside the workspace",
  (step) => {
    // Each step is one compiler run or one node process.
    it(`passes the release check: ${step.label}`, { timeout: hangLimit({ compile: 1 }) }, async () => {
      await expect(step.run(release.app, release.packed)).resolves.toBeUndefined();
    });
  },
);

describe("@outbox/client, packed and installed outside the workspace", () => {
  it("ships compiled JS, declarations, README and LICENSE, no source maps, and takes kysely as a peer", async () => {
    const { stdout } = await run("tar", ["-tzf", client.tarball]);
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
    it("uses the application's kysely, the one copy", () => {
      const version = (
        JSON.parse(
          fs.readFileSync(path.join(projectOf(kysely), "node_modules/kysely/package.json"), "utf8"),
        ) as {
          version: string;
        }
      ).version;
      expect(version.startsWith(`${kysely}.`)).toBe(true);
    });

    // TypeScript 7 first, type-checking only; then 5, whose output the next test runs. The README's
    // examples alone, without app.ts: pg's declarations, which app.ts imports, name Node's types for
    // every file, and would hide an example that only compiles with them named in the tsconfig.
    it("type-checks the README's examples with the README's tsconfig under TypeScript 7", {
      timeout: hangLimit({ compile: 1 }),
    }, async () => {
      const [, typescript7] = compilers(root);
      if (typescript7 === undefined) throw new Error("no TypeScript 7 in the workspace");
      const project = projectOf(kysely);
      fs.writeFileSync(
        path.join(project, "tsconfig.examples.json"),
        JSON.stringify({
          extends: "./tsconfig.json",
          compilerOptions: { noEmit: true },
          files: README_FIXTURES,
        }),
      );
      await expect(compile(project, typescript7, "tsconfig.examples.json")).resolves.toBeUndefined();
    });

    it("compiles it with the README's tsconfig under TypeScript 5", {
      timeout: hangLimit({ compile: 1 }),
    }, async () => {
      const [typescript5] = compilers(root);
      if (typescript5 === undefined) throw new Error("no TypeScript 5 in the workspace");
      await expect(compile(projectOf(kysely), typescript5, "tsconfig.json")).resolves.toBeUndefined();
    });

    it("runs it: the app's migrations before and after the outbox's, an enqueue in its transaction, a handler", {
      timeout: hangLimit({ processStart: 1 }),
    }, async () => {
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
