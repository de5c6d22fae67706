import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { freePort } from "../net/free-port.js";

/**
 * Python moto's `moto_server`: an AWS emulator nobody here wrote, for the services the local stack has
 * no server of its own for (Secrets Manager, S3) and as a second opinion on ours. One process answers
 * every service on one endpoint; the region and account are moto's defaults (us-east-1, 123456789012).
 */
export interface MotoServer {
  /** `http://127.0.0.1:PORT`: the endpoint for any SDK client. */
  readonly endpoint: string;
  /** Stops the process (SIGTERM, then SIGKILL after 3 s). */
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 3_000;

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1_000) });
    return true;
  } catch {
    return false;
  }
}

async function ended(child: ChildProcess, withinMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const exit = once(child, "exit").then(() => true);
  return Promise.race([exit, delay(withinMs).then(() => false)]);
}

/** Starts `moto_server` on a free port of 127.0.0.1 and waits until it answers. */
export async function startMotoServer(): Promise<MotoServer> {
  const port = await freePort();
  const child = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  const spawnFailed = once(child, "error").then(([error]) => error as Error);
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill("SIGTERM");
    if (!(await ended(child, STOP_GRACE_MS))) child.kill("SIGKILL");
  };
  const giveUpAt = Date.now() + STARTUP_TIMEOUT_MS;
  while (!(await answers(endpoint))) {
    const failure = await Promise.race([spawnFailed, delay(100).then(() => undefined)]);
    if (failure !== undefined || child.exitCode !== null) {
      await stop();
      throw new Error(
        `moto_server did not start (${failure?.message ?? `exit ${child.exitCode}`}): is Python moto installed? ${stderr}`,
      );
    }
    if (Date.now() > giveUpAt) {
      await stop();
      throw new Error(`moto_server did not answer on ${endpoint} within ${STARTUP_TIMEOUT_MS} ms: ${stderr}`);
    }
  }
  return { endpoint, stop };
}
