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

/** `^X.Y.Z || ^A.B.C` as its lines: each major with its lowest version. */
function caretLines(range: string): { major: number; minor: number; patch: number }[] {
  return range.split("||").map((part) => {
    const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(part.trim());
    if (!match) throw new Error(`engines.node: ${JSON.stringify(part.trim())} is not ^X.Y.Z`);
    return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
  });
}

function satisfies(version: string, range: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, "").split(".").map(Number) as [number, number, number];
  return caretLines(range).some(
    (line) => line.major === major && (minor > line.minor || (minor === line.minor && patch >= line.patch)),
  );
}

describe("one supported Node range", () => {
  it("holds the image's Node line and the Node these tests run on", () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(read("Dockerfile"))?.[1];
    expect(image).toBeDefined();
    expect(caretLines(engines).map((line) => line.major)).toContain(Number(image));
    expect(satisfies(process.version, engines), `${process.version} in ${engines}`).toBe(true);
  });

  it("is what the README and the deployment page say, with the image's Node", () => {
    for (const page of ["README.md", "docs/deployment.md"])
      expect(read(page), page).toContain(`\`${engines}\``);
    expect(read("docs/deployment.md")).toContain("`node:22-bookworm-slim`");
    expect(read("Dockerfile")).toContain(`engines (${engines};`);
  });
});

/** A process that constructs an SDK client and emits one other warning; its stderr. */
async function sdkClientStderr(options: { quiet: boolean }): Promise<string> {
  const script = [
    options.quiet ? 'await import("./src/cli/quiet-sdk-node-warning.ts");' : "",
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

describe("the AWS SDK's Node version warning in the demo", () => {
  const warnsHere = Number(process.versions.node.split(".")[0]) < 22;

  it("is off in the demo's processes, and only that warning", async () => {
    const stderr = await sdkClientStderr({ quiet: true });
    expect(stderr).not.toContain("NodeVersionSupportWarning");
    expect(stderr).toContain("CanaryWarning: an unrelated warning");
  });

  it("shows without the switch wherever the SDK warns (Node below 22)", async () => {
    const stderr = await sdkClientStderr({ quiet: false });
    expect(stderr.includes("NodeVersionSupportWarning")).toBe(warnsHere);
    expect(stderr).toContain("CanaryWarning: an unrelated warning");
  });

  it("is switched off first thing by both demo entry points", () => {
    for (const entry of ["start.ts", "drill.ts"]) {
      const source = read(`drills/src/cli/${entry}`);
      const firstImport = /^import .*$/m.exec(source)?.[0];
      expect(firstImport, entry).toBe('import "./quiet-sdk-node-warning.js";');
    }
  });
});
