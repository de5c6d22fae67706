import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { consumerSettings } from "@outbox/consumer";
import { settingDefault } from "@outbox/shared";
import { CPU_PROFILE_DIR_ENV, type childControl, emit } from "../child.js";

type Control = ReturnType<typeof childControl>;

/**
 * Every consumer's long-poll wait: the daemon's default (CONSUMER_WAIT_TIME_SECONDS), since the
 * stack's SQS, like AWS's, answers a poll as soon as a message is there.
 */
export const WAIT_TIME_SECONDS = settingDefault(consumerSettings.waitTimeSeconds);

/** What a job measures: started at the parent's go, stopped once the counter says it is done. */
export interface Subject {
  start(): void;
  stop(): Promise<void>;
}

/** Counts distinct items, reports progress every 20 ms and notices when the target is reached. */
export class Counter {
  readonly seen = new Set<string>();
  count = 0;
  reachedAt: number | undefined;
  readonly #reached: Promise<void>;
  #resolve: () => void = () => {};

  constructor(
    readonly expected: number | null,
    private readonly finish: Promise<void>,
  ) {
    this.#reached = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    let reported = -1;
    setInterval(() => {
      if (this.count !== reported) {
        reported = this.count;
        void emit({ t: "progress", n: this.count });
      }
    }, 20).unref();
  }

  add(n = 1): void {
    this.count += n;
    if (this.expected !== null && this.count >= this.expected && this.reachedAt === undefined) {
      this.reachedAt = performance.now();
      this.#resolve();
    }
  }

  addId(id: string): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.add();
  }

  /** Resolves at the target, at `finish`, or after `capMs`; says which. */
  async done(capMs: number): Promise<"reached" | "finish" | "cap"> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<"cap">((resolve) => {
      timer = setTimeout(() => resolve("cap"), capMs);
    });
    try {
      return await Promise.race([
        this.#reached.then(() => "reached" as const),
        this.finish.then(() => "finish" as const),
        cap,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function maxRssMiB(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/**
 * A V8 CPU profile of what runs between `start` and `stop`, written as `<dir>/<name>-<pid>.cpuprofile`
 * when the parent asked for one (ChildOptions.cpuProfDir), else nothing. Only the measured part: a
 * whole-process profile (`node --cpu-prof`) is mostly start-up (tsx compiling, modules loading) at
 * the quick sizes, which would drown the shares of the work measured.
 */
async function startProfile(name: string): Promise<{ stop(): Promise<void> }> {
  const dir = process.env[CPU_PROFILE_DIR_ENV];
  if (!dir) return { stop: async () => {} };
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  // 200 µs: a quick run's measured part is about a second, enough samples to rank functions.
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return {
    async stop() {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

/**
 * The measured part of a job: tells the parent it is ready, waits for its go, runs the subject until
 * the counter's target (or `capMs`, or the parent's finish), reports, then stops it (10 s at most).
 * The report comes first: a stop waits out long polls the figures have no part in, and the parent
 * moves on (and may kill this process) once it has them. `extra` adds the job's own figures, taken
 * before the stop. `name` names its CPU profile, if one is asked for.
 */
export async function measure<Extra extends object>(
  control: Control,
  counter: Counter,
  capMs: number,
  subject: Subject,
  extra: () => Extra,
  name: string,
) {
  await emit({ t: "ready" });
  await control.go;
  const profile = await startProfile(name);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  subject.start();
  const how = await counter.done(capMs);
  const ended = counter.reachedAt ?? performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  await profile.stop();
  await emit({
    t: "result",
    count: counter.count,
    seconds: (ended - started) / 1_000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    maxRssMiB: maxRssMiB(),
    capped: how === "cap",
    ...extra(),
  });
  await Promise.race([subject.stop(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
}

/** The daemons' own AWS clients (keep-alive agents, bounded retries), for us and the peers alike. */
export function awsSettings(region: string, endpoint: string, maxSockets: number) {
  return {
    region,
    endpoint,
    connectionTimeoutMs: 3_000,
    requestTimeoutMs: 5_000,
    maxAttempts: 3,
    maxSockets,
  };
}
