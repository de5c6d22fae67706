import { execFileSync, spawnSync } from "node:child_process";
import { chmod, cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  binariesThePostgresUserCanRun,
  DEFAULT_POSTGRES_MAJOR,
  type PostgresBinaries,
  platformBinaries,
  postgresMajor,
} from "../src/postgres/binaries.js";

// A checkout inside a `mktemp -d` directory (0700, root's): as root, Postgres runs as the postgres
// user, which cannot reach binaries under it. This is the cause of a test run that died at its
// start, without a word, whenever the clone lived in such a directory.

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

const root = process.getuid?.() === 0;

/**
 * The package's own binaries tree, copied under a fresh directory: 0700 as `mktemp -d` makes it
 * (closed to the postgres user), or opened to everyone. Copies, because where this checkout itself
 * lies (open or closed) is the machine's business, not the test's.
 */
async function binariesUnder(directory: "closed" | "open"): Promise<PostgresBinaries> {
  const own = await platformBinaries();
  const parent = await mkdtemp(join(tmpdir(), "tmp."));
  made.push(parent);
  if (directory === "open") await chmod(parent, 0o755);
  const nativeDir = dirname(dirname(own.postgres));
  await cp(nativeDir, join(parent, "native"), { recursive: true, verbatimSymlinks: true });
  return { postgres: join(parent, "native/bin/postgres"), initdb: join(parent, "native/bin/initdb") };
}

/** Runs `initdb --version` as the postgres user (the one the embedded stack runs Postgres as). */
function versionAsPostgresUser(initdb: string): { status: number | null; error?: string } {
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
  const run = spawnSync(initdb, ["--version"], { uid, gid, encoding: "utf8" });
  return { status: run.status, ...(run.error ? { error: (run.error as NodeJS.ErrnoException).code } : {}) };
}

it("gives the postgres user binaries it can run when the package lies under a closed directory", async () => {
  const closed = await binariesUnder("closed");
  const usable = await binariesThePostgresUserCanRun(closed);
  if (!root) {
    // Postgres then runs as ourselves, who can reach our own checkout.
    expect(usable).toBeUndefined();
    return;
  }
  // The cause, as the run met it: the postgres user cannot even start the binary.
  expect(versionAsPostgresUser(closed.initdb)).toEqual({ status: null, error: "EACCES" });
  if (usable === undefined) throw new Error("expected a copy of the binaries the postgres user can run");
  made.push(dirname(dirname(usable.initdb)));
  expect(dirname(dirname(usable.initdb)).startsWith(tmpdir())).toBe(true);
  expect(versionAsPostgresUser(usable.initdb)).toEqual({ status: 0 });
  // A second call (another process, a later run) finds the copy made and uses it as it is.
  expect(await binariesThePostgresUserCanRun(closed)).toEqual(usable);
});

it("leaves the package's own binaries alone when the postgres user can reach them", async () => {
  const open = await binariesUnder("open");
  expect(await binariesThePostgresUserCanRun(open)).toBeUndefined();
  if (root) expect(versionAsPostgresUser(open.initdb)).toEqual({ status: 0 });
});

it("runs the major POSTGRES_VERSION names, 18 unless set, and refuses one it has no binaries for in one line", async () => {
  expect(postgresMajor({})).toBe(DEFAULT_POSTGRES_MAJOR);
  expect(postgresMajor({ POSTGRES_VERSION: "13" })).toBe(13);
  expect(() => postgresMajor({ POSTGRES_VERSION: "13.4" })).toThrow(
    'POSTGRES_VERSION must be a major version such as 13, got "13.4"',
  );
  for (const major of [DEFAULT_POSTGRES_MAJOR, 13]) {
    const { postgres } = await platformBinaries(major);
    expect(execFileSync(postgres, ["--version"], { encoding: "utf8" })).toMatch(
      new RegExp(`^postgres \\(PostgreSQL\\) ${major}\\.`),
    );
  }
  await expect(platformBinaries(12)).rejects.toThrow(/^POSTGRES_VERSION=12: no Postgres 12 binaries for /);
});
