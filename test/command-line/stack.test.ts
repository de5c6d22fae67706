import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { createInterface } from "node:readline";
import { apiSettings } from "@outbox/api";
import { consumerSettings } from "@outbox/consumer";
import { relaySettings } from "@outbox/relay";
import { hangLimit, repoPath, runEntryPoint, waitUntil } from "@outbox/test-kit";
import { afterEach, describe, expect, it, vi } from "vitest";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

/** Every variable some daemon reads from its environment. */
const daemonVariables = new Set(
  [relaySettings, consumerSettings, apiSettings].flatMap((spec) =>
    Object.values(spec).map((definition) => definition.env),
  ),
);

interface RunningStack {
  readonly child: ChildProcess;
  readonly exported: ReadonlyMap<string, string>;
  /** The stack's own process (the one that owns the servers), from its `# backend: …; pid N` line. */
  readonly stackPid: number;
  readonly exited: Promise<number | null>;
}

/** Starts `command` and resolves once it says the local stack is running. */
async function startStackProcess(command: string, args: readonly string[]): Promise<RunningStack> {
  // Its own process group, as a terminal would start it, so that a test can signal the group.
  const child = spawn(command, args, {
    cwd: repoPath("."),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  started.push(child);
  const exported = new Map<string, string>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const match = /^export (\w+)=(.*)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) exported.set(match[1], match[2]);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  const stackPid = await new Promise<number>((resolve, reject) => {
    let pid: number | undefined;
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => {
      stderr += `${line}\n`;
      const announced = /^# backend: \w+; pid (\d+)$/.exec(line);
      if (announced?.[1] !== undefined) pid = Number(announced[1]);
      if (line.includes("local stack running") && pid !== undefined) resolve(pid);
    });
    child.once("exit", (code) => reject(new Error(`the stack exited with ${code} before it ran: ${stderr}`)));
  });
  return { child, exported, stackPid, exited };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The data directory of the Postgres listening on `url`'s port, read off its command line (Linux). */
function postgresDataDir(url: string): string | undefined {
  const port = new URL(url).port;
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let args: string[];
    try {
      args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (!args[0]?.endsWith("/postgres") || args[args.indexOf("-p") + 1] !== port) continue;
    return args[args.indexOf("-D") + 1];
  }
  return undefined;
}

function portRefuses(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

const started: ChildProcess[] = [];
afterEach(() => {
  // A failed expectation must not leave a stack behind: its whole group goes.
  for (const child of started.splice(0)) {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
  }
});

describe("pnpm stack", () => {
  it("migrates and prints only variables a daemon reads: relay status on them shows an empty outbox; SIGTERM exits 0", async () => {
    const stack = await startStackProcess(process.execPath, [
      "--import",
      "tsx",
      "--conditions=development",
      repoPath("drills/src/cli/stack.ts"),
    ]);
    const env = Object.fromEntries(stack.exported);
    const status = await runEntryPoint("apps/relay/src/main.ts", ["status", "--json"], env);
    const equipment = await fetch(`${env.API_EQUIPMENT_URL}/links`, { method: "GET" });
    stack.child.kill("SIGTERM");
    expect(await stack.exited).toBe(0);

    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ total: { unsent: 0, dead: 0 }, topics: [] });
    // The equipment stub answers (POST /links is its one route), so the api can run on the stack.
    expect(equipment.status).toBeGreaterThanOrEqual(400);
    const ours = [...stack.exported.keys()].filter((name) => !name.startsWith("AWS_"));
    expect(ours.filter((name) => !daemonVariables.has(name))).toEqual([]);
    // Enough to run the relay, the consumer and the api on the demo topic and queue.
    expect(ours).toEqual(
      expect.arrayContaining([
        "DATABASE_URL",
        "RELAY_DEFAULT_TOPIC_ARN",
        "CONSUMER_QUEUE_URL",
        "CONSUMER_DLQ_URL",
        "CONSUMER_CLAIM_CHECK_BUCKET",
        "API_EQUIPMENT_URL",
      ]),
    );
  });

  // pnpm itself passes neither SIGTERM nor SIGHUP on to the script it runs, and ignores a SIGINT
  // sent to it alone (a terminal's Ctrl-C goes to the whole group).
  it.each([
    { signal: "SIGTERM", to: "pnpm" },
    { signal: "SIGHUP", to: "pnpm" },
    { signal: "SIGINT", to: "the process group" },
  ] as const)(
    "started as `pnpm stack`, $signal to $to leaves no process, port or data directory behind",
    async ({ signal, to }) => {
      const stack = await startStackProcess("pnpm", ["--silent", "stack"]);
      const pnpmPid = stack.child.pid as number;
      const databaseUrl = stack.exported.get("DATABASE_URL") as string;
      const dataDir = postgresDataDir(databaseUrl);
      expect(dataDir && fs.existsSync(dataDir)).toBe(true);
      process.kill(to === "pnpm" ? pnpmPid : -pnpmPid, signal);
      await waitUntil("the stack's process to exit", () => !processExists(stack.stackPid), {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      expect(await portRefuses(databaseUrl)).toBe(true);
      expect(await portRefuses(stack.exported.get("AWS_ENDPOINT_URL_SNS") as string)).toBe(true);
      // The S3 (moto_server, a Python child process) went with it.
      expect(await portRefuses(stack.exported.get("AWS_ENDPOINT_URL_S3") as string)).toBe(true);
      expect(await portRefuses(stack.exported.get("API_EQUIPMENT_URL") as string)).toBe(true);
      expect(fs.existsSync(dataDir as string)).toBe(false);
    },
  );
});
