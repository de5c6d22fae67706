import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { describeError } from "@outbox/client/internal";
import { contextEngineEnvironment } from "./docker-context.js";

/**
 * How long discovery may take. A working engine answers in milliseconds; the bound is for one that
 * accepts the connection and never answers (a wedged VM, a firewalled DOCKER_HOST), which would
 * otherwise hold the stack's start for minutes. Generous for a Docker Desktop VM that is waking up.
 */
export const DEFAULT_DISCOVERY_TIMEOUT_MS = 10_000;

export type RuntimeDiscovery = { found: true } | { found: false; reason: string };

/** Where testcontainers 11.x looks, in its order, for the error message: the message has to say it. */
function placesSearched(env: NodeJS.ProcessEnv, home: string, fromContext: boolean): string {
  const dockerHost = env.DOCKER_HOST
    ? `DOCKER_HOST=${env.DOCKER_HOST}${fromContext ? " (the Docker context's)" : ""}`
    : "DOCKER_HOST (unset)";
  return [
    dockerHost,
    "tc.host/docker.host in ~/.testcontainers.properties",
    "/var/run/docker.sock",
    ...(env.XDG_RUNTIME_DIR ? [join(env.XDG_RUNTIME_DIR, "docker.sock")] : []),
    join(home, ".docker", "run", "docker.sock"),
    join(home, ".docker", "desktop", "docker.sock"),
    `/run/user/${userInfo().uid}/docker.sock`,
  ].join(", ");
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether testcontainers can reach a container runtime, found by its own discovery (DOCKER_HOST,
 * ~/.testcontainers.properties, the Docker, rootless and Docker Desktop sockets), so that the
 * containers backend, which uses the same discovery, is chosen exactly when it can start. When
 * the user named no engine, the Docker CLI's current context goes first (Colima, Rancher Desktop,
 * OrbStack; see docker-context.ts). Variables set for that stay set: the containers backend's
 * testcontainers calls need them too.
 *
 * An abandoned attempt (timed out) may keep its connection open until the engine or the OS gives up.
 */
export async function discoverContainerRuntime(
  timeoutMs = DEFAULT_DISCOVERY_TIMEOUT_MS,
): Promise<RuntimeDiscovery> {
  const env = process.env;
  const home = homedir();
  const fromContext = contextEngineEnvironment(env, home);
  // testcontainers reads its configuration once, at its first discovery in the process: set it before.
  Object.assign(env, fromContext);
  // Loaded here rather than at the top: it takes about a second, wasted when embedded is forced.
  const { getContainerRuntimeClient } = await import("testcontainers");
  try {
    await withTimeout(getContainerRuntimeClient(), timeoutMs);
    return { found: true };
  } catch (error) {
    const cause = describeError(error);
    return {
      found: false,
      reason: `testcontainers found none (tried ${placesSearched(env, home, "DOCKER_HOST" in fromContext)}): ${cause}. Point DOCKER_HOST at the engine's socket; DEBUG=testcontainers shows each attempt`,
    };
  }
}
