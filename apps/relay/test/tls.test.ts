import { setTimeout as sleep } from "node:timers/promises";
import { awsEnvironment, type BootstrappedResources } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import { hangLimit, stack, startDaemonProcess, startTlsPostgres, type TlsPostgres } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { countRows, enqueueAll, events, topicWithQueue } from "./harness.js";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

const relayMain = "apps/relay/src/main.ts";

describe("the relay daemon on a Postgres that accepts TLS only (RDS)", () => {
  let tls: TlsPostgres;
  let url: string;
  let handle: DatabaseHandle;
  let topic: BootstrappedResources;
  beforeAll(async () => {
    tls = await startTlsPostgres();
    ({ url, handle } = await tls.createMigratedDatabase("relay_tls", "relay-tls-test"));
    topic = await topicWithQueue("relay-tls");
  });
  afterAll(async () => {
    await handle?.close(5_000);
    await tls?.stop();
  });

  it("with DB_SSL_MODE=verify-full and the CA: pool and LISTEN connect verified, events go out, SIGTERM exits 0", async () => {
    const relay = startDaemonProcess(relayMain, {
      DATABASE_URL: url,
      DB_SSL_MODE: "verify-full",
      DB_SSL_CA_FILE: tls.caFile,
      ...awsEnvironment(stack().aws),
      RELAY_TOPIC_ARNS: `orders=${topic.topicArn}`,
      // Only an insert notification wakes it within the test: the LISTEN connection must work too.
      RELAY_POLL_INTERVAL_MS: "600000",
    });
    try {
      await relay.waitForLog("started");
      const connections = () =>
        sql<{ application_name: string; ssl: boolean }>`
          SELECT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
          WHERE a.datname = current_database() AND a.application_name IN ('relay', 'relay-listen')
          ORDER BY 1
        `
          .execute(handle.db)
          .then(({ rows }) => [...new Map(rows.map((row) => [row.application_name, row.ssl])).entries()]);
      await expect.poll(connections, { timeout: 10_000 }).toEqual([
        ["relay", true],
        ["relay-listen", true],
      ]);
      await enqueueAll(handle, events("orders", 3));
      await expect.poll(async () => (await countRows(handle)).published, { timeout: 5_000 }).toBe(3);
      expect(relay.lines.filter((line) => line.level !== undefined && Number(line.level) >= 40)).toEqual([]);
    } finally {
      const exit = await relay.stop("SIGTERM");
      expect(exit.code).toBe(0);
    }
  });
});

describe("relay daemon TLS configuration", () => {
  const exitOf = async (env: Record<string, string>) => {
    const relay = startDaemonProcess(relayMain, {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
      RELAY_TOPIC_ARNS: "orders=arn:aws:sns:us-east-1:000000000000:orders",
      ...env,
    });
    // A relay that starts instead would run on; end it rather than wait for the test's timeout.
    const exit = await Promise.race([relay.exited, sleep(15_000, null, { ref: false })]);
    if (exit === null) relay.child.kill("SIGKILL");
    return { code: exit?.code, stderr: relay.stderr().trim().split("\n") };
  };

  it("refuses an unknown DB_SSL_MODE with exit 78 and one line", async () => {
    expect(await exitOf({ DB_SSL_MODE: "verify-ca" })).toEqual({
      code: 78,
      stderr: [
        'relay: config error: DB_SSL_MODE: expected one of auto, disable, require, verify-full (got "verify-ca")',
      ],
    });
  });

  it("warns once at start-up of a plain-text connection to a host that is not loopback", async () => {
    // 0.0.0.0 is not a loopback address, yet Linux delivers a connection to it to this machine.
    const relay = startDaemonProcess(relayMain, {
      DATABASE_URL: "postgres://nobody@0.0.0.0:1/unused",
      DB_SSL_MODE: "disable",
      RELAY_TOPIC_ARNS: "orders=arn:aws:sns:us-east-1:000000000000:orders",
    });
    try {
      const warning = await relay.waitForLog("plain-text database connection to a host that is not loopback");
      expect(warning).toMatchObject({ level: "warn", host: "0.0.0.0", setting: "DB_SSL_MODE=disable" });
      await relay.waitForLog("schema not checked: the database did not answer");
      expect(
        relay.lines.filter(
          (line) => line.msg === "plain-text database connection to a host that is not loopback",
        ),
      ).toHaveLength(1);
    } finally {
      relay.child.kill("SIGKILL");
      await relay.exited;
    }
  });

  it("refuses verify-full without a readable CA bundle with exit 78 and one line, before connecting", async () => {
    expect(await exitOf({ DB_SSL_MODE: "verify-full", DB_SSL_CA_FILE: "/nonexistent/ca.pem" })).toEqual({
      code: 78,
      stderr: [
        "relay: config error: DB_SSL_CA_FILE: cannot read /nonexistent/ca.pem (ENOENT), which DB_SSL_MODE=verify-full needs",
      ],
    });
  });
});
