import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { hangLimit } from "@outbox/test-kit";
import { describe, expect, it, vi } from "vitest";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
const engines = (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node;

/** `^X.Y.Z || >=A.B.C` as its lines: each major with its lowest version, `>=` open upwards. */
function engineLines(range: string): { major: number; minor: number; patch: number; upwards: boolean }[] {
  return range.split("||").map((part) => {
    const match = /^(\^|>=)(\d+)\.(\d+)\.(\d+)$/.exec(part.trim());
    if (!match) throw new Error(`engines.node: ${JSON.stringify(part.trim())} is not ^X.Y.Z or >=X.Y.Z`);
    const [major, minor, patch] = [match[2], match[3], match[4]].map(Number) as [number, number, number];
    return { major, minor, patch, upwards: match[1] === ">=" };
  });
}

function satisfies(version: string, range: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, "").split(".").map(Number) as [number, number, number];
  return engineLines(range).some((line) => {
    if (major !== line.major) return line.upwards && major > line.major;
    return minor > line.minor || (minor === line.minor && patch >= line.patch);
  });
}

describe("one supported Node range", () => {
  it("holds the image's Node line and the Node these tests run on", () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(read("Dockerfile"))?.[1];
    expect(image).toBeDefined();
    expect(engineLines(engines).map((line) => line.major)).toContain(Number(image));
    expect(satisfies(process.version, engines), `${process.version} in ${engines}`).toBe(true);
  });

  it("is what the README and the deployment page say, with the image's Node", () => {
    for (const page of ["README.md", "docs/deployment.md"])
      expect(read(page), page).toContain(`\`${engines}\``);
    expect(read("docs/deployment.md")).toContain("`node:24-bookworm-slim`");
    expect(read("Dockerfile")).toContain(`engines (${engines};`);
  });
});

/** A process that constructs an SDK client and emits one other warning; its stderr. */
async function sdkClientStderr(): Promise<string> {
  const script = [
    'const { SQSClient } = await import("@aws-sdk/client-sqs");',
    'new SQSClient({ region: "eu-west-1" });',
    'process.emitWarning("an unrelated warning", "CanaryWarning");',
  ].join("\n");
  const { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _unset, ...env } = process.env;
  // Bounded by the test's own timeout: execFile is asynchronous, so vitest can end it.
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--conditions=development", "--input-type=module", "-e", script],
    { cwd: fileURLToPath(new URL("drills/", root)), env },
  );
  return stderr;
}

describe("the AWS SDK's Node version warning", () => {
  // The SDK warns on Node below 22 that its releases after the first week of January 2027 need 22.
  it("never shows: every Node in engines is one the SDK's coming releases support, and this one says nothing", async () => {
    expect(Math.min(...engineLines(engines).map((line) => line.major))).toBeGreaterThanOrEqual(22);
    const stderr = await sdkClientStderr();
    expect(stderr).not.toContain("NodeVersionSupportWarning");
    expect(stderr).toContain("CanaryWarning: an unrelated warning");
  });
});
