import type { PostgresServerControl } from "./postgres/embedded.js";
import type { FaultClient } from "./sns/faults/client.js";
import type { StatsClient } from "./stats/client.js";

// What a started stack is, apart from how it starts: the backends build it, stack.ts picks one.

export type Backend = "embedded" | "containers";

/** Everything an AWS SDK client needs to reach the stack's SNS and SQS. */
export interface AwsEndpoints {
  region: string;
  snsEndpoint: string;
  sqsEndpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /**
   * The stack's S3 (moto on the embedded backend, LocalStack's on containers): path-style only.
   * Absent from `startLocalAws`, which runs SNS and SQS alone.
   */
  s3Endpoint?: string;
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
  /**
   * The bucket the stack created for the S3 claim check (CONSUMER_CLAIM_CHECK_BUCKET), on
   * `aws.s3Endpoint`. Optional only so that StackInfo objects serialised by older code still type-check.
   */
  claimCheckBucket?: string;
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
