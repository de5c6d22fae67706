/**
 * Parent side of a measured child process. Each subject (our relay, a peer listener, a consumer)
 * runs alone in a child, so its CPU and peak RSS are its own — not the parent's, the stack's
 * (SNS emulator, SQS server) or Postgres's.
 *
 * Protocol: the child prints JSON lines on stdout (`ready`, `progress`, `result`); the parent
 * writes `go` (start measuring) and `finish` (stop and report) lines on its stdin.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
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

export class MeasuredChild {
  readonly process: ChildProcess;
  progress = 0;
  readonly ready: Promise<void>;
  readonly result: Promise<JobResult>;
  /** Resolves with the exit time (wallMs) once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  #onProgress: ((n: number) => void) | undefined;

  constructor(job: object, options: ChildOptions = {}) {
    const quiet = ["--disable-warning=NodeVersionSupportWarning"];
    const profile = options.cpuProfDir ? { [CPU_PROFILE_DIR_ENV]: options.cpuProfDir } : {};
    this.process = spawn(
      process.execPath,
      [...quiet, "--conditions=development", "--import", TSX_IMPORT, WORKER],
      {
        env: {
          ...process.env,
          NODE_NO_WARNINGS: "1",
          ...options.env,
          ...profile,
          BENCH_JOB: JSON.stringify(job),
        },
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
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
    let result: JobResult | undefined;
    this.result = this.exited.then(({ code, signal }) => {
      if (result) return result;
      throw new Error(`bench child exited (${code ?? signal}) without a result`);
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
        result = rest as JobResult;
      } else if (line.t === "log") process.stderr.write(`  [child] ${line.msg}\n`);
    });
    this.process.stdin?.on("error", () => {});
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
export function childControl(): { go: Promise<void>; finish: Promise<void> } {
  let go: () => void = () => {};
  let finish: () => void = () => {};
  const control = {
    go: new Promise<void>((resolve) => {
      go = resolve;
    }),
    finish: new Promise<void>((resolve) => {
      finish = resolve;
    }),
  };
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line === "go") go();
    if (line === "finish") finish();
  });
  // The parent died: nothing will ever read our result.
  lines.on("close", () => finish());
  return control;
}

/** Resolves once the line is handed to the pipe: `process.exit` right after must not cut it. */
export function emit(line: Line): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()));
}
