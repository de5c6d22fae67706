import { performance } from "node:perf_hooks";
import { SQSClient } from "@aws-sdk/client-sqs";
import { createConsumer, defineHandlers } from "@outbox/consumer";
import {
  type BootstrappedResources,
  bootstrapResources,
  startTcpFaultProxy,
  type TcpFaultProxy,
} from "@outbox/devstack";
import { consumerEnv } from "@outbox/drills";
import {
  createLogger,
  createMetricsRegistry,
  createSqsClient,
  type DatabaseHandle,
  type OpsServer,
  sleep,
  startOpsServer,
} from "@outbox/shared";
import { createMigratedTestDatabase, DaemonFleet, stack, uniqueName, waitUntil } from "@outbox/test-kit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// /livez of a consumer whose SQS is reached through a TCP fault proxy (packages/devstack). A receive's
// bound (apps/consumer/src/receive-bound.ts) is what its own timeouts allow it; /livez turns 503 only
// when a receive runs past it, which only a timeout that does not fire lets happen.

let handle: DatabaseHandle;
let databaseUrl: string;
let resources: BootstrappedResources;
let proxy: TcpFaultProxy;
const fleet = new DaemonFleet();

beforeAll(async () => {
  const database = await createMigratedTestDatabase("liveness", { service: "liveness-test", poolMax: 4 });
  handle = database.handle;
  databaseUrl = database.url;
  resources = await bootstrapResources(stack().aws, { name: uniqueName("liveness"), rawDelivery: true });
  const sqs = new URL(stack().aws.sqsEndpoint);
  proxy = await startTcpFaultProxy({ host: sqs.hostname, port: Number(sqs.port) });
});
afterEach(async () => {
  // Whatever a failed expectation left cut is let through again for the next test.
  await proxy.restore();
});
afterAll(async () => {
  await fleet.killAll();
  await proxy?.close();
  await handle?.close(5_000);
});

interface Liveness {
  readonly status: number;
  readonly body: { readonly status: string; readonly reason?: string };
}

async function livez(port: number): Promise<Liveness> {
  const response = await fetch(`http://127.0.0.1:${port}/livez`);
  return { status: response.status, body: (await response.json()) as Liveness["body"] };
}

/** Asks /livez every 250 ms until `done`, and returns every answer that was not 200. */
async function notLiveWhile(port: number, done: () => boolean): Promise<Liveness[]> {
  const bad: Liveness[] = [];
  while (!done()) {
    const answer = await livez(port);
    if (answer.status !== 200) bad.push(answer);
    await sleep(250);
  }
  return bad;
}

const proxiedSqs = () => `http://127.0.0.1:${proxy.port}`;

describe("/livez of the consumer daemon", () => {
  // A receive's bound: 1 attempt × (1 s connect + 6 s wait + 3 s request timeout) = 10 s. A bound that
  // left the wait out (4 s) would call each idle long poll a stall; one that left the request timeout
  // out (7 s), each receive failing at its timeout (9 s).
  const waitSeconds = 6;

  it("stays 200 through idle long polls, and through an SQS that answers nothing: each receive ends at its own timeout, so the loop turns", async () => {
    const consumer = fleet.consumer(
      "consumer",
      consumerEnv(
        {
          stack: stack(),
          databaseUrl,
          resources,
          database: handle,
          close: async () => {},
        },
        {
          AWS_ENDPOINT_URL_SQS: proxiedSqs(),
          CONSUMER_WAIT_TIME_SECONDS: String(waitSeconds),
          AWS_MAX_ATTEMPTS: "1",
          AWS_CONNECTION_TIMEOUT_MS: "1000",
          AWS_REQUEST_TIMEOUT_MS: "3000",
          CONSUMER_POLLERS: "1",
        },
      ),
    );
    const port = Number((await consumer.waitForLog("started")).opsPort);
    expect(await livez(port)).toEqual({ status: 200, body: { status: "ok" } });

    // Idle: the queue is empty, so every receive is a whole long poll. Over three of them (each
    // lasts its wait, whatever the machine's pace): nothing but 200, and no receive failed.
    const idleUntil = performance.now() + 3 * waitSeconds * 1_000;
    expect(await notLiveWhile(port, () => performance.now() > idleUntil)).toEqual([]);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics.match(/^consumer_receive_errors_total(?:\{[^}]*\})? (\d+)$/m)?.[1]).toBe("0");

    // The way to SQS answers each request with a response head that never ends. The daemon's client
    // gives up on a request at its request timeout (a total one, throwOnRequestTimeout): each receive
    // fails, the loop backs off and turns. An SQS outage is not the process's fault: still 200.
    await proxy.cut("trickle");
    const failures = () => consumer.lines.filter((line) => line.msg === "receive failed").length;
    expect(await notLiveWhile(port, () => failures() >= 2)).toEqual([]);
    expect(consumer.lines.find((line) => line.msg === "receive failed")?.err).toMatchObject({
      name: "TimeoutError",
    });

    await proxy.restore();
    const exit = await consumer.stop("SIGTERM");
    expect(exit.code, consumer.stderr()).toBe(0);
  }, 180_000);
});

describe("/livez of a consumer run as a library, receiving through an SQS client as the SDK makes it by default", () => {
  let ops: OpsServer | undefined;
  afterEach(async () => {
    await ops?.close();
  });

  it("a receive that no timeout ends turns /livez 503 with the reason once past its bound; 200 again once the loop turns", async () => {
    const log = createLogger({ service: "liveness-test", version: "0", level: "silent" });
    const aws = stack().aws;
    const sqs = createSqsClient({
      region: aws.region,
      endpoint: aws.sqsEndpoint,
      connectionTimeoutMs: 1_000,
      requestTimeoutMs: 5_000,
      maxAttempts: 1,
    });
    // What a team writes: the SDK's defaults, whose request timeout (none here) only ever warns and
    // whose socket timeout counts inactivity, which a server that trickles its answer never shows.
    const receiveSqs = new SQSClient({
      region: aws.region,
      endpoint: proxiedSqs(),
      credentials: aws.credentials,
    });
    const receiveBoundMs = 3_000;
    const consumer = createConsumer({
      handlers: defineHandlers({ "liveness.checked": async () => {} }),
      pool: handle.pool,
      sqs,
      receiveSqs,
      queueUrl: resources.queueUrl,
      waitTimeSeconds: 1,
      pollers: 1,
      receiveBoundMs,
      log,
    });
    ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetricsRegistry("liveness-test"),
      log,
    });
    ops.liveUnless(() => consumer.stalled());
    consumer.start();
    try {
      expect(await livez(ops.port)).toEqual({ status: 200, body: { status: "ok" } });
      await proxy.cut("trickle");
      const port = ops.port;
      let stalled: Liveness | undefined;
      await waitUntil(
        "/livez to answer 503",
        async () => {
          const answer = await livez(port);
          if (answer.status === 503) stalled = answer;
          return stalled !== undefined;
        },
        // Past the bound, whatever the pace: the receive never ends on its own.
        { timeoutMs: receiveBoundMs + 60_000, intervalMs: 250 },
      );
      expect(stalled?.body).toEqual({
        status: "stalled",
        reason: expect.stringMatching(
          new RegExp(
            `^poll loop stalled: a receive has been running for \\d+ ms, past its bound of ${receiveBoundMs} ms$`,
          ),
        ),
      });

      // The way back: the hung connection is reset, that receive fails, the loop turns.
      await proxy.restore();
      await waitUntil("/livez to answer 200 again", async () => (await livez(port)).status === 200, {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
    } finally {
      const summary = await consumer.drain();
      expect(summary.clean).toBe(true);
      sqs.destroy();
      receiveSqs.destroy();
    }
    // Stopped: no more a liveness question, whatever a receive does.
    expect(consumer.stalled()).toBeUndefined();
  }, 180_000);
});
