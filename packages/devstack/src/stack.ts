import { selectBackend } from "./backends/select-backend.js";
import type { Backend, LocalStack, StackInfo, StartStackOptions } from "./local-stack.js";
import { FaultClient } from "./sns/faults/client.js";
import { StatsClient } from "./stats/client.js";

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
    ...(stack.claimCheckBucket === undefined ? {} : { claimCheckBucket: stack.claimCheckBucket }),
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
