/**
 * Parent side of a measured child process. Each subject (our relay, a peer listener, a consumer)
 * runs alone in a child, so its CPU and peak RSS are its own — not the parent's, the stack's
 * (SNS emulator, SQS server) or Postgres's.
 *
 * Protocol: the parent writes the job as the first line on the child's stdin, then `go` (start
 * measuring) and `finish` (stop and report); the child prints JSON lines on stdout (`ready`,
 * `progress`, `result`). The job comes after the spawn so that a worker can load its modules (about
 * 1.5 s under tsx) while the parent is still preparing the run: see `spawnSpareWorker`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { EXIT_OK } from "@outbox/shared/exit-codes";
import { TSX_IMPORT } from "@outbox/test-kit/process";
import { wallMs } from "./measure.js";

const WORKER = fileURLToPath(new URL("./worker.ts", import.meta.url));

/** What every job reports. */
export interface JobResult {
  /** Distinct events/messages the subject handled while measured. */
  count: number;
  seconds: number;
  cpuSeconds: number;
  /** Peak resident set of the child process, MiB. */
  maxRssMiB: number;
  capped?: boolean;
  [extra: string]: unknown;
}

type Line =
  | { t: "ready" }
  | { t: "progress"; n: number }
  | ({ t: "result" } & JobResult)
  | { t: "log"; msg: string };

export interface ChildOptions {
  env?: Record<string, string>;
  /** Directory for a CPU profile of the measured part of the job (see `measure`). */
  cpuProfDir?: string;
}

/** The child's environment variable naming `ChildOptions.cpuProfDir`. */
export const CPU_PROFILE_DIR_ENV = "BENCH_CPU_PROFILE_DIR";

/** A worker spawned ahead of its job, loading while the parent prepares; the next MeasuredChild takes it. */
let spare: ChildProcess | undefined;

function alive(child: ChildProcess | undefined): child is ChildProcess {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

function spawnWorker(options: ChildOptions): ChildProcess {
  const profile = options.cpuProfDir ? { [CPU_PROFILE_DIR_ENV]: options.cpuProfDir } : {};
  return spawn(process.execPath, ["--conditions=development", "--import", TSX_IMPORT, WORKER], {
    env: { ...process.env, NODE_NO_WARNINGS: "1", ...options.env, ...profile },
    stdio: ["pipe", "pipe", "inherit"],
  });
}

/**
 * Starts a worker for the next MeasuredChild without options, once a child has reported (its
 * measuring is over): the worker's start-up then overlaps the clean-up and the next run's set-up
 * instead of the run, and it stays idle (no CPU) until its job arrives.
 */
function spawnSpareWorker(): void {
  if (alive(spare)) return;
  spare = spawnWorker({});
  holdParent(spare, false);
}

/**
 * Whether the child (its process handle and its pipes) keeps this process alive. An idle spare must
 * not: a caller that never takes it (a tool's last run) still exits, and the spare with it (its
 * stdin closes); the child taken for a job must, until it is done.
 */
function holdParent(child: ChildProcess, hold: boolean): void {
  // A spawned child's stdio pipes are sockets, which can be unref'd like the process handle.
  const handles = [child, child.stdin as Socket | null, child.stdout as Socket | null];
  for (const handle of handles) {
    if (hold) handle?.ref();
    else handle?.unref();
  }
}

/** Ends a spare nobody took: the bench's last step, so no worker outlives the run. */
export function killSpareWorker(): void {
  if (alive(spare)) spare.kill("SIGKILL");
  spare = undefined;
}

function takeWorker(options: ChildOptions): ChildProcess {
  const plain = options.env === undefined && options.cpuProfDir === undefined;
  if (!plain || !alive(spare)) return spawnWorker(options);
  const taken = spare;
  spare = undefined;
  holdParent(taken, true);
  return taken;
}

export class MeasuredChild {
  readonly process: ChildProcess;
  progress = 0;
  readonly ready: Promise<void>;
  readonly result: Promise<JobResult>;
  /** Resolves with the exit time (wallMs) once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  #onProgress: ((n: number) => void) | undefined;

  constructor(job: object, options: ChildOptions = {}) {
    this.process = takeWorker(options);
    this.exited = new Promise((resolve) =>
      this.process.once("exit", (code, signal) => resolve({ code, signal, at: wallMs() })),
    );
    let markReady: () => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      void this.exited.then(({ code, signal }) =>
        reject(new Error(`bench child exited (${code ?? signal}) before it was ready`)),
      );
    });
    this.ready.catch(() => {});
    let markResult: (result: JobResult) => void = () => {};
    this.result = new Promise<JobResult>((resolve, reject) => {
      markResult = resolve;
      void this.exited.then(({ code, signal }) =>
        reject(new Error(`bench child exited (${code ?? signal}) without a result`)),
      );
    });
    this.result.catch(() => {});
    const lines = createInterface({ input: this.process.stdout as NonNullable<ChildProcess["stdout"]> });
    lines.on("line", (text) => {
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch {
        process.stderr.write(`[child] ${text.slice(0, 300)}\n`);
        return;
      }
      if (line.t === "ready") markReady();
      else if (line.t === "progress") {
        this.progress = line.n;
        this.#onProgress?.(line.n);
      } else if (line.t === "result") {
        const { t: _, ...rest } = line;
        markResult(rest as JobResult);
        // Measuring is over: the next child's worker can load now, during this run's clean-up
        // and the next one's set-up.
        spawnSpareWorker();
      } else if (line.t === "log") process.stderr.write(`  [child] ${line.msg}\n`);
    });
    this.process.stdin?.on("error", () => {});
    this.#send(JSON.stringify(job));
  }

  onProgress(callback: (n: number) => void): void {
    this.#onProgress = callback;
  }

  #send(line: string): void {
    if (this.process.exitCode === null && this.process.stdin?.writable) this.process.stdin.write(`${line}\n`);
  }

  go(): void {
    this.#send("go");
  }

  finish(): void {
    this.#send("finish");
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
  }
}

/** Spawns a job, starts it once ready and waits for its own result. */
export async function runJob(job: object, options: ChildOptions = {}): Promise<JobResult> {
  const child = new MeasuredChild(job, options);
  try {
    await child.ready;
    child.go();
    return await child.result;
  } finally {
    child.kill("SIGKILL");
  }
}

/** Runs several copies of jobs at once; `finish` is sent to all when `done(sum of progress)` says so. */
export async function runTogether(
  jobs: readonly object[],
  done: (total: number) => boolean,
  capMs: number,
): Promise<{ seconds: number; results: JobResult[]; total: number; capped: boolean }> {
  const children = jobs.map((job) => new MeasuredChild(job));
  try {
    await Promise.all(children.map((child) => child.ready));
    const total = () => children.reduce((sum, child) => sum + child.progress, 0);
    for (const child of children) child.go();
    const started = wallMs();
    let capped = false;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (done(total())) resolve();
      };
      for (const child of children) child.onProgress(check);
      setTimeout(() => {
        capped = true;
        resolve();
      }, capMs).unref();
    });
    const seconds = (wallMs() - started) / 1_000;
    for (const child of children) child.finish();
    return {
      seconds,
      results: await Promise.all(children.map((child) => child.result)),
      total: total(),
      capped,
    };
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}

/** The line-oriented control channel, child side. */
export function childControl(): { job: Promise<unknown>; go: Promise<void>; finish: Promise<void> } {
  let job: ((value: unknown) => void) | undefined;
  let go: () => void = () => {};
  let finish: () => void = () => {};
  const control = {
    job: new Promise<unknown>((resolve) => {
      job = resolve;
    }),
    go: new Promise<void>((resolve) => {
      go = resolve;
    }),
    finish: new Promise<void>((resolve) => {
      finish = resolve;
    }),
  };
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (job) {
      job(JSON.parse(line));
      job = undefined;
    } else if (line === "go") go();
    else if (line === "finish") finish();
  });
  lines.on("close", () => {
    // A spare the bench never used: there is nothing to do.
    if (job) process.exit(EXIT_OK);
    // The parent died: nothing will ever read our result.
    finish();
  });
  return control;
}

/** Resolves once the line is handed to the pipe: `process.exit` right after must not cut it. */
export function emit(line: Line): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()));
}
