import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { cleanUpAtExit } from "../exit-cleanup.js";
import { freePort } from "../net/free-port.js";
import { stopServerProcess } from "../stop-server-process.js";

/** How PgBouncer hands out server connections: per client session, or per transaction. */
export type PoolMode = "session" | "transaction";

export interface PgBouncerOptions {
  /** The Postgres server behind it: an admin URL (`postgres://user:password@127.0.0.1:port/…`). */
  readonly postgresUrl: string;
  readonly mode: PoolMode;
  /** Default `PGBOUNCER` or `/usr/sbin/pgbouncer` (Debian's package). */
  readonly command?: string;
  /** How long it may take to accept a connection; default 10 s. */
  readonly startTimeoutMs?: number;
}

/** A PgBouncer on 127.0.0.1 in front of one Postgres server, every database of it. */
export interface RunningPgBouncer {
  readonly mode: PoolMode;
  readonly port: number;
  /** `url` (a database's, on the Postgres server) as reached through this PgBouncer. */
  via(url: string): string;
  /** What it logged on stderr so far (its warnings: `got packet … when not linked`, …). */
  log(): string;
  stop(): Promise<void>;
}

const BIND_ATTEMPTS = 3;

/** The command: PGBOUNCER, else Debian's path. */
export function pgBouncerCommand(): string {
  return process.env.PGBOUNCER ?? "/usr/sbin/pgbouncer";
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * The configuration: every database of the server (`*`), trust for clients (loopback only), the
 * server's own credentials from its URL, server connections enough for a few daemons' pools in
 * session mode. PgBouncer's defaults otherwise, as a user's would be: no
 * `ignore_startup_parameters`, no `max_prepared_statements` (1.18 has none), LIFO server reuse.
 */
function configText(server: URL, port: number, mode: PoolMode, dir: string): string {
  const password = decodeURIComponent(server.password);
  return `[databases]
* = host=${server.hostname} port=${server.port} user=${decodeURIComponent(server.username)} password=${password}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "users.txt")}
pool_mode = ${mode}
max_client_conn = 500
; Session mode holds a server connection per client connection: room for a test's daemons' pools.
default_pool_size = 80
`;
}

async function startOnce(options: PgBouncerOptions): Promise<RunningPgBouncer> {
  const command = options.command ?? pgBouncerCommand();
  const server = new URL(options.postgresUrl);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "pgbouncer-"));
  // PgBouncer refuses to run as root: as root it drops to `nobody`, who must read the files.
  await chmod(dir, 0o755);
  await writeFile(join(dir, "pgbouncer.ini"), configText(server, port, options.mode, dir), { mode: 0o644 });
  await writeFile(join(dir, "users.txt"), `"${decodeURIComponent(server.username)}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const child = spawn(command, [...(asRoot ? ["-u", "nobody"] : []), join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const unregister = cleanUpAtExit(() => child.kill("SIGKILL"));
  let output = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    // Bounded: a long run's log lines are only ever searched for warnings.
    output = (output + chunk).slice(-200_000);
  });
  const stop = async () => {
    unregister();
    await stopServerProcess(child);
    await rm(dir, { recursive: true, force: true });
  };
  let spawnError: Error | undefined;
  child.once("error", (error) => {
    spawnError = error;
  });
  const until = performance.now() + (options.startTimeoutMs ?? 10_000);
  while (!(await accepting(port))) {
    if (spawnError !== undefined || child.exitCode !== null || performance.now() > until) {
      await stop();
      throw new Error(
        `pgbouncer (${command}) did not start: ${spawnError?.message ?? (output.trim() || "(no output)")} (Debian: apt-get install pgbouncer)`,
      );
    }
    await delay(50);
  }
  return {
    mode: options.mode,
    port,
    via(url) {
      const target = new URL(url);
      target.host = `127.0.0.1:${port}`;
      target.password = "";
      return target.toString();
    },
    log: () => output,
    stop,
  };
}

/** Starts PgBouncer as a child process and waits until it accepts connections. */
export async function startPgBouncer(options: PgBouncerOptions): Promise<RunningPgBouncer> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= BIND_ATTEMPTS; attempt += 1) {
    try {
      return await startOnce(options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}
