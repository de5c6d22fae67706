import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type BuiltEntryProcess, startBuiltEntry, withWorkspaceBuild } from "@outbox/test-kit";

const run = promisify(execFile);

/**
 * `infra/scripts/package-daemons.sh`, as the Dockerfile runs it, with a fresh, empty pnpm metadata
 * cache so that a warm cache on this machine cannot hide a step that needs the registry. It builds
 * the packages' dist/ and copies them: never beside another test file's build.
 */
export async function packageDaemons(root: string, out: string): Promise<void> {
  const emptyCache = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-pnpm-cache-"));
  try {
    await withWorkspaceBuild(() =>
      run("bash", [path.join(root, "infra/scripts/package-daemons.sh"), out], {
        cwd: root,
        env: { ...process.env, CI: "true", npm_config_cache_dir: emptyCache },
        maxBuffer: 16 * 1024 * 1024,
      }),
    );
  } finally {
    fs.rmSync(emptyCache, { recursive: true, force: true });
  }
}

/** `node dist/main.js` in a deployed directory, exactly as the image's CMD runs it. */
export function startPackaged(directory: string, env: Readonly<Record<string, string>>): BuiltEntryProcess {
  return startBuiltEntry(directory, "dist/main.js", env);
}
