import { CONSUMER_METRICS } from "@outbox/consumer";
import { isRunning, startedDaemons } from "@outbox/test-kit/process";
import { readMetric } from "./daemon-metrics.js";
import type { DrillEnvironment } from "./drill-environment.js";
import { countTables, queueDepths } from "./observe.js";

/**
 * Duplicates the inboxes of the current drill caught so far (consumers started from `firstDaemon`
 * on): drained counts of exited consumers, live metrics of the rest.
 */
async function duplicatesSoFar(firstDaemon: number): Promise<number> {
  let total = 0;
  for (const daemon of startedDaemons().slice(firstDaemon)) {
    if (!daemon.name.startsWith("consumer")) continue;
    const drained = daemon.lines.find((line) => line.msg === "drained");
    if (drained) total += Number(drained.duplicates ?? 0);
    else if (isRunning(daemon)) {
      const port = daemon.lines.find((line) => line.msg === "started")?.opsPort;
      if (typeof port === "number")
        total += await readMetric(port, CONSUMER_METRICS.duplicates).catch(() => 0);
    }
  }
  return total;
}

export interface ProgressBoard {
  watch(environment: DrillEnvironment): void;
  /** A progress message: printed above the live line on a TTY, as a plain line otherwise. */
  say(message: string): void;
  stop(): void;
}

/**
 * Live figures of the drill that is running: one line redrawn every 250 ms on a TTY, or a plain
 * line every 5 s when the output is a file or a CI log.
 */
export function startProgressBoard(out: NodeJS.WriteStream = process.stderr): ProgressBoard {
  const interactive = out.isTTY === true;
  let environment: DrillEnvironment | undefined;
  let firstDaemon = 0;
  let status = "";
  let busy = false;
  const started = performance.now();
  const render = () => {
    if (interactive) out.write(`\r\x1b[2K${status}`);
  };
  const refresh = async () => {
    if (!environment || busy) return;
    busy = true;
    try {
      const [counts, depths, duplicates] = await Promise.all([
        countTables(environment),
        queueDepths(environment),
        duplicatesSoFar(firstDaemon),
      ]);
      const seconds = ((performance.now() - started) / 1000).toFixed(0).padStart(3);
      status = `[${seconds}s] enqueued ${counts.enqueued} · published ${counts.published} · consumed ${counts.inbox} · duplicates ${duplicates} · unsent ${counts.unsent} · queue ${depths.queue} · DLQ ${depths.dlq}`;
      if (interactive) render();
      else out.write(`${status}\n`);
    } catch {
      // A Postgres restart in the chaos drill: the board skips a beat.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(refresh, interactive ? 250 : 5_000);
  return {
    watch(next) {
      environment = next;
      firstDaemon = startedDaemons().length;
    },
    say(message) {
      if (interactive) out.write(`\r\x1b[2K${message}\n`);
      else out.write(`${message}\n`);
      render();
    },
    stop() {
      clearInterval(timer);
      if (interactive) out.write("\r\x1b[2K");
    },
  };
}
