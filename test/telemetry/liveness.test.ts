import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { Deadline, type OutboxTables, uuidv7 } from "@outbox/client";
import { createConsumer, defineHandlers } from "@outbox/consumer";
import {
  type BootstrappedResources,
  bootstrapResources,
  sqsClient,
  startTcpFaultProxy,
  type TcpFaultProxy,
} from "@outbox/devstack";
import { consumerEnv } from "@outbox/drills";
import { createRelay, createSnsPublisher } from "@outbox/relay";
import {
  createLogger,
  createMetricsRegistry,
  createSnsClient,
  type DatabaseHandle,
  type OpsServer,
  sleep,
  startOpsServer,
} from "@outbox/shared";
import { createMigratedTestDatabase, DaemonFleet, stack, uniqueName, waitUntil } from "@outbox/test-kit";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// /livez of a consumer whose SQS is reached through a TCP fault proxy (packages/devstack). A receive's
// bound (apps/consumer/src/loop/receive-bound.ts) is what its own timeouts allow it; /livez turns 503 only
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

/**
 * Asks /livez every 250 ms until it answers 503, then expects the reason to name the stalled step
 * (`step`, e.g. "poll loop stalled: a receive") and its bound.
 */
async function expectStalled(port: number, boundMs: number, step: string): Promise<void> {
  let stalled: Liveness | undefined;
  await waitUntil(
    "/livez to answer 503",
    async () => {
      const answer = await livez(port);
      if (answer.status === 503) stalled = answer;
      return stalled !== undefined;
    },
    // Past the bound, whatever the pace: the step never ends on its own.
    { timeoutMs: boundMs + 60_000, intervalMs: 250 },
  );
  expect(stalled?.body).toEqual({
    status: "stalled",
    reason: expect.stringMatching(
      new RegExp(`^${step} has been running for \\d+ ms, past its bound of ${boundMs} ms$`),
    ),
  });
}

/** Asks /livez every 250 ms until it answers 200. */
async function untilLive(port: number): Promise<void> {
  await waitUntil("/livez to answer 200 again", async () => (await livez(port)).status === 200, {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
}

/** Asks /livez every 250 ms until `done`, and returns every answer that was not 200. */
/** The longest /livez is watched for something to happen (two receive failures, say): a bound, not a verdict. */
const WATCH_LIMIT_MS = 120_000;

async function notLiveWhile(port: number, done: () => boolean): Promise<Liveness[]> {
  const bad: Liveness[] = [];
  const giveUpAt = performance.now() + WATCH_LIMIT_MS;
  while (!done()) {
    if (performance.now() > giveUpAt)
      throw new Error(`what /livez was watched through did not happen within ${WATCH_LIMIT_MS} ms`);
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

describe("/livez of the consumer daemon while intake is paused", () => {
  let dbProxy: TcpFaultProxy | undefined;
  afterEach(async () => {
    await dbProxy?.close();
  });

  it("stays 200 through a database outage longer than the loop's bound, while /readyz says intake is paused", async () => {
    const database = new URL(databaseUrl);
    dbProxy = await startTcpFaultProxy({ host: database.hostname, port: Number(database.port) });
    database.host = `127.0.0.1:${dbProxy.port}`;
    // A receive's bound: 1 × (1 s connect + 1 s wait + 3 s request timeout) = 5 s.
    const boundMs = 5_000;
    const consumer = fleet.consumer(
      "paused-consumer",
      consumerEnv(
        { stack: stack(), databaseUrl, resources, database: handle, close: async () => {} },
        {
          DATABASE_URL: database.toString(),
          CONSUMER_HANDLERS_MODULE: fileURLToPath(new URL("./fixtures/traced-handlers.ts", import.meta.url)),
          CONSUMER_WAIT_TIME_SECONDS: "1",
          AWS_MAX_ATTEMPTS: "1",
          AWS_CONNECTION_TIMEOUT_MS: "1000",
          AWS_REQUEST_TIMEOUT_MS: "3000",
          DB_CONNECT_TIMEOUT_MS: "1000",
        },
      ),
    );
    const port = Number((await consumer.waitForLog("started")).opsPort);
    const readyz = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: response.status, body: await response.text() };
    };

    // The database goes away; the next message's transaction finds out, the probe confirms it,
    // and intake pauses: no receive is sent until the database answers again.
    await dbProxy.cut("reset");
    const eventId = uuidv7();
    const sqs = sqsClient(stack().aws);
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: resources.queueUrl,
          MessageBody: JSON.stringify({ n: 1 }),
          MessageAttributes: {
            event_id: { DataType: "String", StringValue: eventId },
            event_type: { DataType: "String", StringValue: "trace.checked" },
          },
        }),
      );
    } finally {
      sqs.destroy();
    }
    await waitUntil(
      "intake to pause",
      async () => (await readyz()).body === "intake paused: database unreachable\n",
      { timeoutMs: 60_000, intervalMs: 100, alive: [consumer] },
    );
    // Paused for twice the bound (and however long the machine takes to ask): nothing but 200.
    const pausedUntil = performance.now() + 2 * boundMs;
    expect(await notLiveWhile(port, () => performance.now() > pausedUntil)).toEqual([]);
    expect(await readyz()).toEqual({ status: 503, body: "intake paused: database unreachable\n" });

    await dbProxy.restore();
    await waitUntil("intake to resume", async () => (await readyz()).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 100,
      alive: [consumer],
    });
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
    // Deletes and the like (none here: no message arrives) on the stack's client.
    const sqs = sqsClient(aws);
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
      await expectStalled(ops.port, receiveBoundMs, "poll loop stalled: a receive");

      // The way back: the hung connection is reset, that receive fails, the loop turns.
      await proxy.restore();
      await untilLive(ops.port);
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

describe("/livez of a relay run as a library, claiming through a pg pool as pg makes it by default", () => {
  let ops: OpsServer | undefined;
  let dbProxy: TcpFaultProxy | undefined;
  afterEach(async () => {
    await ops?.close();
    await dbProxy?.close();
  });

  it("a claim that no timeout ends turns /livez 503 with the reason once past its bound; 200 again once the loop turns", async () => {
    const log = createLogger({ service: "liveness-test", version: "0", level: "silent" });
    const aws = stack().aws;
    const database = new URL(databaseUrl);
    dbProxy = await startTcpFaultProxy({ host: database.hostname, port: Number(database.port) });
    database.host = `127.0.0.1:${dbProxy.port}`;
    // What a team writes: no query_timeout, no statement_timeout, so a server that no longer answers
    // (a dropped path, a frozen host) holds a query for ever.
    const pool = new pg.Pool({ connectionString: database.toString(), max: 4 });
    // The connections the proxy resets on restore: an idle client's error the pool reports, a
    // checked-out one's its client (pg throws an error nobody listens to); the claim fails either way.
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    const db = new Kysely<OutboxTables>({ dialect: new PostgresDialect({ pool }) });
    const sns = createSnsClient({
      region: aws.region,
      endpoint: aws.snsEndpoint,
      connectionTimeoutMs: 1_000,
      requestTimeoutMs: 5_000,
      maxAttempts: 1,
    });
    const claimBoundMs = 2_000;
    const relay = createRelay({
      db,
      publisher: createSnsPublisher(sns),
      listenUrl: null,
      topicArns: { drill: resources.topicArn },
      pollIntervalMs: 200,
      claimBoundMs,
      log,
    });
    relay.start();
    ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      metrics: createMetricsRegistry("liveness-test"),
      log,
    });
    ops.liveUnless(() => relay.stalled());
    try {
      expect(await livez(ops.port)).toEqual({ status: 200, body: { status: "ok" } });
      // Idle claims, one every 200 ms, each well inside its bound.
      const idleUntil = performance.now() + 2 * claimBoundMs;
      expect(await notLiveWhile(ops.port, () => performance.now() > idleUntil)).toEqual([]);

      await dbProxy.cut("hang");
      await expectStalled(ops.port, claimBoundMs, "claim loop stalled: a claim");

      // The way back: the hung connections are reset, that claim fails, the loop backs off and turns.
      await dbProxy.restore();
      await untilLive(ops.port);
    } finally {
      const deadline = Deadline.after(10_000);
      expect((await relay.drain(deadline)).clean).toBe(true);
      deadline.dispose();
      sns.destroy();
      await db.destroy();
    }
    expect(relay.stalled()).toBeUndefined();
  }, 180_000);
});
