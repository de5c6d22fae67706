import { dockerEngineAnswers } from "./backends/docker-probe.js";
import { FaultClient } from "./faults/client.js";

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
}

export interface LocalStack extends StackInfo {
  faults: FaultClient | null;
  /** Stops every server the stack started and removes its temporary files. */
  stop(): Promise<void>;
}

export interface StartStackOptions {
  /** Default: env `STACK` (`embedded` | `containers`), else `auto` (containers when Docker answers). */
  backend?: "auto" | Backend;
  /** Extra Postgres server settings, e.g. `{ wal_level: "logical" }`. */
  postgresSettings?: Record<string, string | number>;
}

function requestedBackend(options: StartStackOptions): "auto" | Backend {
  if (options.backend) return options.backend;
  const env = process.env.STACK;
  if (env === undefined || env === "") return "auto";
  if (env === "embedded" || env === "containers" || env === "auto") return env;
  throw new Error(`STACK must be "embedded" or "containers", got "${env}"`);
}

export async function startStack(options: StartStackOptions = {}): Promise<LocalStack> {
  const requested = requestedBackend(options);
  const docker = requested === "embedded" ? false : await dockerEngineAnswers();
  if (requested === "containers" && !docker) {
    throw new Error(
      "STACK=containers needs a Docker engine, but none answered on DOCKER_HOST or /var/run/docker.sock",
    );
  }
  if (requested === "embedded" || !docker) {
    const { startEmbeddedStack } = await import("./backends/embedded.js");
    return startEmbeddedStack(options);
  }
  // Loaded lazily: testcontainers is heavy and pointless on machines without Docker.
  const { startContainersStack } = await import("./backends/containers.js");
  return startContainersStack(options);
}

export function stackInfo(stack: LocalStack): StackInfo {
  return {
    backend: stack.backend,
    postgres: { adminUrl: stack.postgres.adminUrl },
    aws: stack.aws,
    faultControlUrl: stack.faultControlUrl,
  };
}

export function faultClientFor(info: StackInfo): FaultClient | null {
  return info.faultControlUrl ? new FaultClient(info.faultControlUrl) : null;
}
