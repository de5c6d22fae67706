import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { type DaemonProcess, isRunning, startDaemonProcess } from "./daemon-process.js";

/** The port a started api process listens on, once it does. */
export async function apiPort(api: DaemonProcess): Promise<number> {
  return Number((await api.waitForLog("listening")).port);
}

/**
 * Every daemon process a drill or a test starts, so that however it ends — a failed expectation, an
 * exception, Ctrl-C — `killAll` leaves no process behind.
 */
export class DaemonFleet {
  readonly #processes: DaemonProcess[] = [];

  relay(name: string, env: Record<string, string>): DaemonProcess {
    return this.#track(startDaemonProcess("apps/relay/src/main.ts", env, { name }));
  }

  /** The consumer, with the example handlers unless `env` names another module. */
  consumer(name: string, env: Record<string, string>): DaemonProcess {
    const withHandlers = { CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE, ...env };
    return this.#track(startDaemonProcess("apps/consumer/src/main.ts", withHandlers, { name }));
  }

  /**
   * The photo service (apps/api) as a real process; the drills' `apiEnv` builds its environment. `args` picks
   * the command (`reconcile` for one pass of the reconciliation job).
   */
  api(name: string, env: Record<string, string>, args: readonly string[] = []): DaemonProcess {
    return this.#track(startDaemonProcess("apps/api/src/main.ts", env, { name, args }));
  }

  /**
   * The photo service with each POST holding its transaction `holdMs` before the commit, so that a
   * stop finds requests in flight (apps/api/test/holding-commits.ts: a test's entry, not a setting).
   */
  apiHoldingCommits(name: string, env: Record<string, string>, holdMs: number): DaemonProcess {
    return this.#track(
      startDaemonProcess("apps/api/test/holding-commits.ts", env, { name, args: [String(holdMs)] }),
    );
  }

  /** SIGKILLs whatever is still running and waits for it to be gone. */
  async killAll(): Promise<void> {
    await Promise.all(
      this.#processes.map(async (daemon) => {
        if (isRunning(daemon)) daemon.child.kill("SIGKILL");
        await daemon.exited;
      }),
    );
  }

  #track(daemon: DaemonProcess): DaemonProcess {
    this.#processes.push(daemon);
    return daemon;
  }
}
