import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { apiSettings } from "@outbox/api";
import { consumerSettings } from "@outbox/consumer";
import { relaySettings } from "@outbox/relay";
import { repoPath } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";

/** Every variable some daemon reads from its environment. */
const daemonVariables = new Set(
  [relaySettings, consumerSettings, apiSettings].flatMap((spec) =>
    Object.values(spec).map((definition) => definition.env),
  ),
);

describe("pnpm stack", () => {
  it("prints only variables a daemon reads (the AWS SDK's own aside), and stops on SIGTERM with exit 0", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=development", repoPath("packages/devstack/src/cli.ts")],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const exported = new Map<string, string>();
    createInterface({ input: child.stdout }).on("line", (line) => {
      const match = /^export (\w+)=(.*)$/.exec(line);
      if (match?.[1] !== undefined && match[2] !== undefined) exported.set(match[1], match[2]);
    });
    const running = new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stderr }).on("line", (line) => {
        if (line.includes("local stack running")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`pnpm stack exited with ${code} before it was running`)));
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await running;
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);

    const ours = [...exported.keys()].filter((name) => !name.startsWith("AWS_"));
    expect(ours.filter((name) => !daemonVariables.has(name))).toEqual([]);
    // Enough to run the relay and the consumer on the demo topic and queue.
    expect(ours).toEqual(
      expect.arrayContaining([
        "DATABASE_URL",
        "RELAY_DEFAULT_TOPIC_ARN",
        "CONSUMER_QUEUE_URL",
        "CONSUMER_DLQ_URL",
      ]),
    );
  });
});
