import { mkdtempSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanUpAtExit, stackInfo, startStack } from "@outbox/devstack";
import type { TestProject } from "vitest/node";

// An error thrown outside any await (an `error` event nobody listens to, from a server's child
// process) ends the run through vitest's own `exit` listener before Node gets to print it: the run
// would die without a word. Print it first, synchronously, so that a pipe gets it too.
process.on("uncaughtExceptionMonitor", (error, origin) => {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  try {
    writeSync(2, `\nthe test run's set-up failed (${origin}): ${text}\n`);
  } catch {
    // stderr is a closed pipe: a throw here would end the process (exit 7) before its exit
    // listeners stop the stack's servers.
  }
});

// One local stack per test run (backend chosen by env STACK, else Docker if it answers, else
// embedded); every test file creates its own database and topic/queue names on it, so files
// stay isolated while the servers start only once. Vitest calls the returned teardown even
// when tests fail.
export default async function setup(project: TestProject) {
  const stack = await startStack();
  project.provide("stack", stackInfo(stack));
  project.provide("postgresAdminUrl", stack.postgres.adminUrl);
  // What the run's test files share on disk: the workspace build's lock, the packed tarballs. Named
  // after this process; removed at the end, or at exit when a signal cuts the teardown short.
  const runFolder = mkdtempSync(join(tmpdir(), `outbox-test-run-${process.pid}-`));
  const removeRunFolder = () => rmSync(runFolder, { recursive: true, force: true });
  const unregister = cleanUpAtExit(removeRunFolder);
  project.provide("runFolder", runFolder);
  // The programs the tests start (hundreds, mostly the same few entry points) load their modules'
  // compiled code from a cache the first start of each fills (Node 22.1+; Node 20 ignores it).
  process.env.NODE_COMPILE_CACHE ??= join(runFolder, "node-compile-cache");
  return async () => {
    removeRunFolder();
    unregister();
    await stack.stop();
  };
}
