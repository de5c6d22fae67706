import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describeError } from "@outbox/client/internal";
import { type LocalStack, stackInfo, startStack } from "@outbox/devstack";
import { EXIT_CRASH, EXIT_FORCED, EXIT_OK } from "@outbox/shared";
import { killRunningDaemons, repoPath } from "@outbox/test-kit/process";
import { type DrillContext, type DrillScale, drillContext } from "../drill-context.js";
import { startProgressBoard } from "../progress-board.js";
import { allPassed, renderTable, type ScenarioResult } from "../report.js";
import { runDrills } from "../scenarios/index.js";

export interface DrillSessionOptions {
  readonly drills: readonly string[];
  readonly scale: DrillScale;
  readonly seed: number;
  /** Where the JSON report goes; default `reports/<label>-<time>.json`. */
  readonly reportPath?: string;
  /** What the default report's name starts with: `drill` (default) or `start`, which `pnpm readme:table` reads. */
  readonly label?: string;
  /**
   * After the drills: start what should keep running (the demo's `--keep-running`); the session
   * then waits for Ctrl-C, which ends it normally (exit code of the drills), and cleans up.
   */
  readonly keepRunning?: (stack: LocalStack, context: DrillContext) => Promise<void>;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** The drills inject faults only the embedded stack offers; the report says which stack it ran on. */
const BACKEND = "embedded";

function writeReport(
  options: DrillSessionOptions,
  results: readonly ScenarioResult[],
  startedAt: Date,
): string {
  const file =
    options.reportPath ??
    repoPath(`reports/${options.label ?? "drill"}-${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const report = {
    startedAt: startedAt.toISOString(),
    machine: { node: process.version, platform: `${os.platform()} ${os.arch()}`, cpus: os.cpus().length },
    seed: options.seed,
    scale: options.scale,
    backend: BACKEND,
    drills: options.drills,
    passed: allPassed(results),
    results,
  };
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/**
 * One run of `pnpm drill` or `pnpm start`: an embedded stack, the drills with live progress, the
 * acceptance table on stdout, the JSON report on disk. Leaves no process, port or temp directory
 * behind, on success, on failure and on Ctrl-C. Resolves with the exit code.
 */
export async function runDrillSession(options: DrillSessionOptions): Promise<number> {
  const startedAt = new Date();
  const board = startProgressBoard();
  board.say(
    `seed ${options.seed} (repeat this run with --seed ${options.seed}); starting the embedded stack…`,
  );
  const stack = await startStack({ backend: BACKEND });
  let interrupted = false;
  let endKeepRunning: (() => void) | undefined;
  const interrupt = async () => {
    if (endKeepRunning) return endKeepRunning();
    if (interrupted) process.exit(EXIT_FORCED);
    interrupted = true;
    board.say("interrupted: stopping daemons and the stack…");
    board.stop();
    await killRunningDaemons();
    await stack.stop();
    process.exit(EXIT_FORCED);
  };
  for (const signal of SIGNALS) process.on(signal, interrupt);

  try {
    const context = drillContext(stackInfo(stack), {
      scale: options.scale,
      seed: options.seed,
      progress: (message) => board.say(message),
      watch: (environment) => board.watch(environment),
    });
    const results = await runDrills(context, options.drills);
    board.stop();
    process.stdout.write(`\n${renderTable(results)}\n\n`);
    const reportFile = writeReport(options, results, startedAt);
    process.stderr.write(`report: ${reportFile}\n`);
    const passed = allPassed(results);
    if (!passed) process.stderr.write("some expectations failed (see the table)\n");
    if (options.keepRunning) {
      await options.keepRunning(stack, context);
      process.stderr.write("running until Ctrl-C\n");
      await new Promise<void>((resolve) => {
        endKeepRunning = resolve;
      });
      process.stderr.write("stopping daemons and the stack…\n");
    }
    return passed ? EXIT_OK : EXIT_CRASH;
  } catch (error) {
    board.stop();
    process.stderr.write(`drill failed: ${describeError(error)}\n`);
    return EXIT_CRASH;
  } finally {
    await killRunningDaemons();
    await stack.stop();
    for (const signal of SIGNALS) process.off(signal, interrupt);
  }
}
