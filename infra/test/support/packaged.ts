import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { collectLogLines, type LogLine, withWorkspaceBuild } from "@outbox/test-kit";

export type { LogLine } from "@outbox/test-kit";

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

export interface PackagedDaemon {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `node dist/main.js` in a deployed directory, exactly as the image's CMD runs it: plain node, no
 * loader, no `development` condition, and an environment holding nothing but what is passed here
 * (vitest's own NODE_OPTIONS must not leak in).
 */
export function startPackaged(directory: string, env: Readonly<Record<string, string>>): PackagedDaemon {
  const child = spawn(process.execPath, ["dist/main.js"], {
    cwd: directory,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NODE_ENV: "production", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogLine[] = [];
  let stderr = "";
  collectLogLines(child, lines);
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, stderr: () => stderr, exited };
}
