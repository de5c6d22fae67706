import { selectBackend } from "./backends/select-backend.js";
import { FaultClient } from "./faults/client.js";
import type { PostgresServerControl } from "./postgres/embedded.js";
import { StatsClient } from "./stats/client.js";

export type Backend = "embedded" | "containers";

/** Everything an AWS SDK client needs to reach the stack's SNS and SQS. */
export interface AwsEndpoints {
  region: string;
  snsEndpoint: string;
  sqsEndpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

/** The JSON-serialisable part of a {@link LocalStack}: what a vitest globalSetup can `provide`. */
export interface StackInfo {
  backend: Backend;
  postgres: { /** Superuser URL to the database `postgres`. */ adminUrl: string };
  aws: AwsEndpoints;
  /** Null when the backend cannot inject faults (containers: LocalStack has no such hook). */
  faultControlUrl: string | null;
  /**
   * The SNS emulator's publish statistics (`GET`/`DELETE`), null on the containers backend.
   * Optional only so that StackInfo objects serialised by older code still type-check.
   */
  statsUrl?: string | null;
}

/**
 * The stack's Postgres: its URL plus stop/start of the *same* server for chaos drills.
 * Embedded backend only; on the containers backend the control methods reject with a
 * "not supported" error (a restarted container may come back on another host port).
 */
export interface StackPostgres extends PostgresServerControl {
  /** Superuser URL to the database `postgres`. */
  adminUrl: string;
  /** The server's data directory on this machine (removed by `stop`); null on the containers backend. */
  dataDir: string | null;
}

export interface LocalStack extends StackInfo {
  postgres: StackPostgres;
  faults: FaultClient | null;
  /** Publish statistics of the SNS emulator; null on the containers backend. */
  stats: StatsClient | null;
  /** Stops every server the stack started and removes its temporary files. */
  stop(): Promise<void>;
}

export interface StartStackOptions {
  /**
   * Default: env `STACK` (`embedded` | `containers` | `auto`), else `auto`: containers when
   * testcontainers finds a container runtime, embedded otherwise.
   */
  backend?: "auto" | Backend;
  /** Extra Postgres server settings, e.g. `{ wal_level: "logical" }`. */
  postgresSettings?: Record<string, string | number>;
}

function requestedBackend(options: StartStackOptions): "auto" | Backend {
  if (options.backend) return options.backend;
  const env = process.env.STACK;
  if (env === undefined || env === "") return "auto";
  if (env === "embedded" || env === "containers" || env === "auto") return env;
  throw new Error(`STACK must be "embedded", "containers" or "auto", got "${env}"`);
}

export async function startStack(options: StartStackOptions = {}): Promise<LocalStack> {
  if ((await selectBackend(requestedBackend(options))) === "embedded") {
    const { startEmbeddedStack } = await import("./backends/embedded.js");
    return startEmbeddedStack(options);
  }
  // Loaded lazily: the container modules are pointless on machines without a container runtime.
  const { startContainersStack } = await import("./backends/containers.js");
  return startContainersStack(options);
}

export function stackInfo(stack: LocalStack): StackInfo {
  return {
    backend: stack.backend,
    postgres: { adminUrl: stack.postgres.adminUrl },
    aws: stack.aws,
    faultControlUrl: stack.faultControlUrl,
    statsUrl: stack.statsUrl ?? null,
  };
}

export function faultClientFor(info: StackInfo): FaultClient | null {
  return info.faultControlUrl ? new FaultClient(info.faultControlUrl) : null;
}

/** The emulator's publish statistics, or null on backends without the emulator (containers). */
export function statsClientFor(info: StackInfo): StatsClient | null {
  if (info.statsUrl) return new StatsClient(info.statsUrl);
  return faultClientFor(info)?.statsClient ?? null;
}
