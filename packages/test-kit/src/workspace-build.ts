import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { inject } from "vitest";

/**
 * The longest a test waits for another file's build of the workspace: building and packing every
 * publishable package, or the daemons' deploy, each takes a minute or two on a loaded machine.
 */
const BUILD_WAIT_MS = 15 * 60_000;

/** This test run's own folder: test/global-setup.ts names it and removes it at the end. */
export function runFolder(): string {
  const folder = inject("runFolder");
  fs.mkdirSync(folder, { recursive: true });
  return folder;
}

/** Whether the lock's owner has died: a lock just made may not hold its pid yet, and is alive. */
function ownerDied(lock: string): boolean {
  let owner: number;
  try {
    owner = Number(fs.readFileSync(path.join(lock, "pid"), "utf8"));
  } catch {
    return false;
  }
  if (!(owner > 0)) return false;
  try {
    process.kill(owner, 0);
    return false;
  } catch {
    return true;
  }
}

/**
 * Runs `work` while no other test file of the run builds the workspace. A build rewrites packages'
 * dist/ in place (tsc, `pnpm pack`'s prepack, the daemons' packaging script): a second build at
 * the same time, or a copy of dist/ taken meanwhile, could read half-written files. Test files run
 * in processes of their own, so the lock is a folder (mkdir is atomic) holding its owner's pid; a
 * lock whose owner died is taken over.
 */
export async function withWorkspaceBuild<T>(work: () => Promise<T>): Promise<T> {
  const lock = path.join(runFolder(), "workspace-build.lock");
  const giveUpAt = performance.now() + BUILD_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (ownerDied(lock)) fs.rmSync(lock, { recursive: true, force: true });
    else if (performance.now() > giveUpAt)
      throw new Error(`another test file's workspace build held ${lock} for ${BUILD_WAIT_MS} ms`);
    else await sleep(250);
  }
  fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
  try {
    return await work();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * What `make` produces, made once per run whichever test file asks first: the others wait for it
 * (under the build lock) and read the same JSON. For artefacts every file may share, such as the
 * packed tarballs.
 */
export async function oncePerRun<T>(name: string, make: (folder: string) => Promise<T>): Promise<T> {
  const folder = path.join(runFolder(), name);
  const made = path.join(folder, "made.json");
  return withWorkspaceBuild(async () => {
    if (fs.existsSync(made)) return JSON.parse(fs.readFileSync(made, "utf8")) as T;
    fs.rmSync(folder, { recursive: true, force: true });
    fs.mkdirSync(folder, { recursive: true });
    const value = await make(folder);
    fs.writeFileSync(made, JSON.stringify(value));
    return value;
  });
}
