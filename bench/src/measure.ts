/**
 * Measurement helpers shared by `pnpm bench` and the probes in bench/tools: summaries, percentiles,
 * process and machine CPU.
 */
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export interface Summary {
  min: number;
  median: number;
  max: number;
  runs: number[];
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  return {
    min: sorted[0] ?? Number.NaN,
    median: sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN),
    max: sorted.at(-1) ?? Number.NaN,
    runs: [...values],
  };
}

/** /proc counts CPU time in clock ticks (USER_HZ: 100 a second on Linux), so a reading moves in 10 ms steps. */
export const CPU_TICK_SECONDS = 0.01;

/**
 * The fewest ticks a CPU figure read from /proc may rest on: at 20, one tick more or less moves it
 * by 5 %. A short run on a fast machine costs Postgres 0 or 1 tick, and a ratio of two such
 * readings is noise or 0/0; such a figure is reported as below resolution (NaN, with
 * {@link BELOW_RESOLUTION} in its note), never as a number.
 */
export const MIN_CPU_TICKS = 20;

export const BELOW_RESOLUTION = `below the clock's resolution (a CPU figure needs ≥ ${MIN_CPU_TICKS} ticks of ${CPU_TICK_SECONDS * 1000} ms; a larger run gets one)`;

/** µs of CPU per item from a /proc reading over `items`, or NaN when the reading is below resolution. */
export function tickedCpuMicrosPerItem(cpuSeconds: number, items: number): number {
  if (!(cpuSeconds >= MIN_CPU_TICKS * CPU_TICK_SECONDS) || items <= 0) return Number.NaN;
  return Math.round((cpuSeconds / items) * 1e6);
}

/** CPU seconds (user + system) a process used so far, from /proc; `children` adds reaped children. */
export function processCpuSeconds(pid: number | undefined, children = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    const own = Number(fields[11]) + Number(fields[12]);
    const reaped = children ? Number(fields[13]) + Number(fields[14]) : 0;
    return (own + reaped) * CPU_TICK_SECONDS;
  } catch {
    return Number.NaN;
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat). */
export function machineJiffies(): { busy: number; total: number } {
  const cpu =
    readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = cpu.reduce((sum, value) => sum + value, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

/** Percent of all cores busy between two `machineJiffies()` readings. */
export function machineBusyPercent(before: { busy: number; total: number }): number {
  const after = machineJiffies();
  return Math.round(((after.busy - before.busy) / Math.max(1, after.total - before.total)) * 100);
}

/** Parent process id of `pid` (Linux). */
export function parentPid(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[1]);
}

/**
 * CPU seconds of a Postgres server: the postmaster with its reaped children (backends that exited)
 * plus every live child. Differences of two readings give the server's CPU over a run.
 */
export function postgresCpuSeconds(postmasterPid: number): number {
  let total = processCpuSeconds(postmasterPid, true);
  for (const entry of safeReaddir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentPid(Number(entry)) === postmasterPid) total += processCpuSeconds(Number(entry));
    } catch {
      // the process ended meanwhile; its time is in the postmaster's reaped-children count
    }
  }
  return total;
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  loadAverage: number[];
}

export function machineInfo(): MachineInfo {
  let cpuModel = os.cpus()[0]?.model ?? "unknown";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) cpuModel = line.split(":")[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux
  }
  return {
    nproc: os.availableParallelism(),
    cpuModel,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
}

/** Waits (up to `maxMs`) for the 1-minute load average to fall below `below`; returns the last reading. */
export async function waitForLowLoad(
  below: number,
  maxMs: number,
  onWait: (load: number) => void,
): Promise<number> {
  const until = Date.now() + maxMs;
  let load = os.loadavg()[0] ?? 0;
  while (load >= below && Date.now() < until) {
    onWait(load);
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    load = os.loadavg()[0] ?? 0;
  }
  return load;
}

/**
 * Calls `produce(n)` for n = 0 … total − 1 at a steady `rate` per second, keeping at most
 * `inFlight` calls outstanding (a producer's connection budget). Resolves with the seconds it took.
 */
export async function produceAtRate(
  rate: number,
  total: number,
  produce: (n: number) => Promise<void>,
  inFlight = 8,
): Promise<number> {
  const interval = 1_000 / rate;
  const t0 = performance.now();
  const pending = new Set<Promise<void>>();
  for (let n = 0; n < total; n += 1) {
    const wait = t0 + n * interval - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const work: Promise<void> = produce(n).finally(() => pending.delete(work));
    pending.add(work);
    if (pending.size >= inFlight) await Promise.race(pending);
  }
  await Promise.all(pending);
  return (performance.now() - t0) / 1_000;
}
