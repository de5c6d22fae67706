import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { contextEngineEnvironment, dockerContextHost } from "../src/backends/docker-context.js";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "devstack-context-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** Writes a context as `docker context create` does: meta.json under the sha256 of its name. */
function addContext(configDir: string, name: string, host: string): void {
  const dir = join(configDir, "contexts", "meta", createHash("sha256").update(name).digest("hex"));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "meta.json"),
    JSON.stringify({ Name: name, Endpoints: { docker: { Host: host } } }),
  );
}

function useContext(name: string, host: string): void {
  addContext(join(home, ".docker"), name, host);
  writeFileSync(join(home, ".docker", "config.json"), JSON.stringify({ currentContext: name }));
}

describe("dockerContextHost", () => {
  it("is the endpoint of config.json's currentContext", () => {
    useContext("colima", "unix:///colima.sock");
    expect(dockerContextHost({}, home)).toBe("unix:///colima.sock");
  });

  it("follows DOCKER_CONTEXT and DOCKER_CONFIG like the Docker CLI", () => {
    const configDir = join(home, "elsewhere");
    addContext(configDir, "rancher-desktop", "unix:///rd.sock");
    expect(dockerContextHost({ DOCKER_CONFIG: configDir, DOCKER_CONTEXT: "rancher-desktop" }, home)).toBe(
      "unix:///rd.sock",
    );
  });

  it("is undefined for the default context, no config, or a context without metadata", () => {
    expect(dockerContextHost({}, home)).toBeUndefined();
    expect(dockerContextHost({ DOCKER_CONTEXT: "default" }, home)).toBeUndefined();
    expect(dockerContextHost({ DOCKER_CONTEXT: "gone" }, home)).toBeUndefined();
  });
});

describe("contextEngineEnvironment", () => {
  it("points testcontainers at a VM's forwarded socket and the VM's own socket for the reaper", () => {
    const socket = join(home, ".colima", "default", "docker.sock");
    useContext("colima", `unix://${socket}`);
    expect(contextEngineEnvironment({}, home)).toEqual({
      DOCKER_HOST: `unix://${socket}`,
      TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE: "/var/run/docker.sock",
    });
    expect(contextEngineEnvironment({ TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE: "/x.sock" }, home)).toEqual({
      DOCKER_HOST: `unix://${socket}`,
    });
  });

  it("leaves the reaper's socket alone for an engine outside the home directory", () => {
    useContext("rootless", "unix:///run/user/1000/docker.sock");
    expect(contextEngineEnvironment({}, home)).toEqual({ DOCKER_HOST: "unix:///run/user/1000/docker.sock" });
  });

  it("sets nothing when DOCKER_HOST or ~/.testcontainers.properties names an engine", () => {
    useContext("colima", `unix://${join(home, "colima.sock")}`);
    expect(contextEngineEnvironment({ DOCKER_HOST: "tcp://127.0.0.1:2375" }, home)).toEqual({});
    writeFileSync(join(home, ".testcontainers.properties"), "docker.host=unix:///var/run/docker.sock\n");
    expect(contextEngineEnvironment({}, home)).toEqual({});
  });
});
