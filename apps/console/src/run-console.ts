import {
  createLogger,
  EXIT_CONFIG,
  EXIT_CRASH,
  EXIT_OK,
  listenForStopRequests,
  packageVersion,
  reportConfigErrors,
  resolveConfig,
} from "@outbox/shared";
import { startConsole } from "./console.js";
import { consoleProblems, consoleSettings } from "./settings.js";
import { stopWithParent } from "./stop-with-parent.js";

/**
 * `pnpm console`: the settings checked (every problem listed, exit 78), the console started, then
 * served until SIGTERM or Ctrl-C (exit 0), or until the `pnpm` that started it is gone (stopWithParent).
 * `--read-only` turns actions off whatever the environment says.
 */
export async function runConsole(options: { readonly readOnly: boolean }): Promise<number> {
  const config = reportConfigErrors("console", () =>
    resolveConfig(consoleSettings, consoleProblems, process.env),
  );
  if (config === undefined) return EXIT_CONFIG;
  const log = createLogger({
    service: "console",
    version: packageVersion(import.meta.url),
    level: config.logLevel,
  });
  const stops = listenForStopRequests(log, () => {});
  const unwatch = stopWithParent();
  try {
    const running = await startConsole(
      { ...config, readOnly: config.readOnly || options.readOnly },
      stops.stopping,
      log,
    );
    if (typeof running === "string") {
      process.stderr.write(running);
      return EXIT_CONFIG;
    }
    await stops.requested;
    await running.close();
    log.info("console stopped");
    return EXIT_OK;
  } catch (error) {
    log.error({ err: error }, "console: could not start");
    return EXIT_CRASH;
  } finally {
    unwatch();
    stops.dispose();
  }
}
