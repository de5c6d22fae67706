import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function readJson(path: string): unknown {
  const text = readText(path);
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * The engine address of the Docker CLI's current context, when that context is not `default`,
 * resolved the way the CLI does: `DOCKER_CONTEXT`, else `currentContext` in
 * `$DOCKER_CONFIG/config.json` (default `~/.docker`), whose endpoint is in
 * `contexts/meta/<sha256 of the name>/meta.json`.
 */
export function dockerContextHost(env: NodeJS.ProcessEnv, home: string): string | undefined {
  const configDir = env.DOCKER_CONFIG || join(home, ".docker");
  const name = env.DOCKER_CONTEXT || field(readJson(join(configDir, "config.json")), "currentContext");
  if (typeof name !== "string" || name === "" || name === "default") return undefined;
  const id = createHash("sha256").update(name).digest("hex");
  const meta = readJson(join(configDir, "contexts", "meta", id, "meta.json"));
  const host = field(field(field(meta, "Endpoints"), "docker"), "Host");
  return typeof host === "string" && host !== "" ? host : undefined;
}

/** Whether the user named an engine for testcontainers, which the Docker context must not override. */
function engineConfigured(env: NodeJS.ProcessEnv, home: string): boolean {
  if (env.DOCKER_HOST) return true;
  const properties = readText(join(home, ".testcontainers.properties")) ?? "";
  return /^\s*(docker|tc)\.host\s*[=:\s]/m.test(properties);
}

/**
 * The variables that point testcontainers at the Docker CLI's current context, or none when the
 * user named an engine or uses the default context.
 *
 * Colima, Rancher Desktop and OrbStack register their socket as a Docker context, not at a path
 * testcontainers 11 looks at (/var/run/docker.sock, the rootless and Docker Desktop sockets), so
 * `docker ps` works while testcontainers finds nothing. A context socket under the home directory
 * is forwarded from a VM, inside which the engine's socket, the one testcontainers mounts into its
 * reaper container, is /var/run/docker.sock: testcontainers' docs have Colima and Podman users set
 * that override by hand (https://node.testcontainers.org/supported-container-runtimes/).
 */
export function contextEngineEnvironment(env: NodeJS.ProcessEnv, home: string): Record<string, string> {
  const host = engineConfigured(env, home) ? undefined : dockerContextHost(env, home);
  if (host === undefined) return {};
  const forwarded = host.startsWith(`unix://${join(home, "/")}`);
  return {
    DOCKER_HOST: host,
    ...(forwarded && env.TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE === undefined
      ? { TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE: "/var/run/docker.sock" }
      : {}),
  };
}
