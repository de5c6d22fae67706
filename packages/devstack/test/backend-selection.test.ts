import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_DISCOVERY_TIMEOUT_MS } from "../src/backends/runtime-discovery.js";
import { selectBackend } from "../src/backends/select-backend.js";
import {
  type FakeEngine,
  startFakeDockerEngine,
  startSilentDockerEngine,
} from "./support/fake-docker-engine.js";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const childScript = fileURLToPath(new URL("./support/select-backend-child.ts", import.meta.url));

// Sockets testcontainers finds whatever HOME and DOCKER_HOST say: with an engine there, "no
// runtime" cannot be staged on this machine.
const hostHasEngine = ["/var/run/docker.sock", `/run/user/${userInfo().uid}/docker.sock`].some((path) =>
  existsSync(path),
);

interface Selection {
  backend?: string;
  error?: string;
  ms: number;
  /** The engine socket testcontainers mounts into its reaper container. */
  remoteSocketPath?: string;
}

let home: string;
const engines: FakeEngine[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "devstack-runtime-"));
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()));
  await rm(home, { recursive: true, force: true });
});

/**
 * Selection in a child process (testcontainers caches its runtime per process) whose HOME and
 * XDG_RUNTIME_DIR are an empty temp dir and whose environment names no engine, plus `env`.
 */
async function selectInChild(
  requested: string,
  env: Record<string, string> = {},
  timeoutMs = DEFAULT_DISCOVERY_TIMEOUT_MS,
): Promise<Selection> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(DOCKER_|TESTCONTAINERS_)/.test(name)),
  );
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--conditions=development", childScript, requested, String(timeoutMs)],
    {
      cwd: repoRoot,
      env: { ...inherited, HOME: home, XDG_RUNTIME_DIR: home, ...env },
      timeout: 60_000,
    },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Selection;
}

describe("backend selection through testcontainers' runtime discovery", () => {
  it.skipIf(hostHasEngine)("auto picks embedded, without waiting, when no runtime is reachable", async () => {
    const selection = await selectInChild("auto");
    expect(selection.backend).toBe("embedded");
    // Waiting would be the discovery's bound; a loaded machine's start-up stays far under half of it.
    expect(selection.ms).toBeLessThan(DEFAULT_DISCOVERY_TIMEOUT_MS / 2);
  });

  it("auto picks containers when a Docker API answers on DOCKER_HOST", async () => {
    const engine = await startFakeDockerEngine(join(home, "docker.sock"));
    engines.push(engine);
    const selection = await selectInChild("auto", { DOCKER_HOST: engine.dockerHost });
    expect(selection).toMatchObject({ backend: "containers", remoteSocketPath: join(home, "docker.sock") });
    expect(engine.requests, "the engine testcontainers asked").toContain("/info");
  });

  it("finds the engine of the Docker CLI's current context (Colima, Rancher Desktop, OrbStack)", async () => {
    const engine = await startFakeDockerEngine(join(home, "colima.sock"));
    engines.push(engine);
    const contextId = createHash("sha256").update("colima").digest("hex");
    await mkdir(join(home, ".docker", "contexts", "meta", contextId), { recursive: true });
    await writeFile(join(home, ".docker", "config.json"), JSON.stringify({ currentContext: "colima" }));
    await writeFile(
      join(home, ".docker", "contexts", "meta", contextId, "meta.json"),
      JSON.stringify({ Name: "colima", Endpoints: { docker: { Host: engine.dockerHost } } }),
    );
    // Forced, too: an explicit choice of containers is served by the same discovery.
    const selection = await selectInChild("containers");
    // The socket is under HOME, so forwarded from a VM: the reaper mounts the VM's own socket.
    expect(selection).toMatchObject({ backend: "containers", remoteSocketPath: "/var/run/docker.sock" });
    expect(engine.requests).toContain("/info");
  });

  it.skipIf(hostHasEngine)(
    "forced containers without a runtime fails with one line naming what was tried",
    async () => {
      const missing = `unix://${join(home, "missing.sock")}`;
      const selection = await selectInChild("containers", { DOCKER_HOST: missing });
      expect(selection.backend).toBeUndefined();
      expect(selection.error).toMatch(
        /^The containers backend needs a container runtime, but testcontainers found none/,
      );
      for (const place of [
        `DOCKER_HOST=${missing}`,
        "~/.testcontainers.properties",
        "/var/run/docker.sock",
      ]) {
        expect(selection.error).toContain(place);
      }
      expect(selection.error).not.toContain("\n");
    },
  );

  it("bounds discovery: an engine that never answers does not hold the start", async () => {
    const engine = await startSilentDockerEngine(join(home, "docker.sock"));
    engines.push(engine);
    const env = { DOCKER_HOST: engine.dockerHost };
    const auto = await selectInChild("auto", env, 300);
    expect(auto.backend).toBe("embedded");
    expect(auto.ms).toBeGreaterThanOrEqual(290);
    expect(auto.ms).toBeLessThan(DEFAULT_DISCOVERY_TIMEOUT_MS / 2);
    const forced = await selectInChild("containers", env, 300);
    expect(forced.error).toContain("no answer within 300 ms");
  });

  it("forced embedded does not look for a runtime", async () => {
    const engine = await startFakeDockerEngine(join(home, "docker.sock"));
    engines.push(engine);
    vi.stubEnv("DOCKER_HOST", engine.dockerHost);
    try {
      expect(await selectBackend("embedded")).toBe("embedded");
    } finally {
      vi.unstubAllEnvs();
    }
    expect(engine.requests).toEqual([]);
  });
});
