import http from "node:http";
import { Deadline } from "@outbox/client";
import { awsEnvironment } from "@outbox/devstack";
import {
  awsClients,
  capturingLogger,
  faultClient,
  hangLimit,
  metricValue,
  type Received,
  receiveAll,
  runEntryPoint,
  stack,
  startDaemonProcess,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type BatchReport, createSnsPublisher, RELAY_METRICS, type Relay } from "../src/index.js";
import { countRows, enqueueAll, events, useRelayTestBed } from "./harness.js";

// Its tests start up to 3 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 3 }) });

/** Rows sent back to wait, without an attempt, over every batch `relay` reports from now on. */
function countDeferred(relay: Relay): () => number {
  let deferred = 0;
  relay.on("batch", (report: BatchReport) => {
    deferred += report.deferred;
  });
  return () => deferred;
}

/** Message bodies' `n` per ordering key (`n % keys`), in the order received. */
function orderPerKey(received: readonly Received[], keys: number): Map<number, number[]> {
  const byKey = new Map<number, number[]>();
  for (const message of received) {
    const { n } = JSON.parse(message.body) as { n: number };
    byKey.set(n % keys, [...(byKey.get(n % keys) ?? []), n]);
  }
  return byKey;
}

// Every test that injects faults lives in this one file: the emulator has one fault configuration,
// and `set` replaces it, so two files setting faults in parallel would undo each other.
const faults = faultClient();

describe.runIf(faults)("the relay under bus faults", () => {
  const control = faults as NonNullable<typeof faults>;
  // One attempt per call and a short socket timeout: the relay's own retry is what is under test.
  const bed = useRelayTestBed("faults", {
    aws: { sns: { maxAttempts: 1, requestHandler: { requestTimeout: 400, throwOnRequestTimeout: true } } },
    defaults: {
      pollIntervalMs: 100,
      publishTimeoutMs: 1_000,
      leaseMs: 10_000,
      leaseMarginMs: 1_000,
      maxAttempts: 1_000,
    },
  });
  const { start, stop } = bed;

  afterEach(async () => {
    await control.clear();
    await bed.stopAll();
    await sql`TRUNCATE outbox`.execute(bed.handle.db);
    // Each test counts what arrives: leave the queues empty for the next one.
    await Promise.all(
      [bed.standard.queueUrl, bed.fifo.queueUrl].map((queueUrl) =>
        receiveAll(bed.sqs, queueUrl, 0, { quietMs: 200 }),
      ),
    );
  });

  const attemptsOf = async (ids: readonly string[]) =>
    (
      await bed.handle.db
        .selectFrom("outbox")
        .select(["id", "attempts", "published_at", "dead_at", "last_error"])
        .where("id", "in", ids)
        .execute()
    ).sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));

  it("retries only the entries a PublishBatch reported as failed", async () => {
    const ids = await enqueueAll(bed.handle, events("orders", 20));
    const failing = [ids[3] ?? "", ids[7] ?? ""];
    await control.set({
      topics: [bed.standard.topicArn],
      failBatchEntries: { attribute: "event_id", values: failing },
    });
    start();
    await expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 10_000 }).toBe(18);
    await expect
      .poll(async () => (await attemptsOf(failing)).every((row) => row.attempts >= 2), { timeout: 10_000 })
      .toBe(true);
    const [failed] = await attemptsOf(failing);
    expect(failed?.last_error).toMatch(/InternalError/);
    await control.clear();
    await expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 10_000 }).toBe(20);
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 20);
    // The 18 that went through the first time were not sent again.
    expect(received).toHaveLength(20);
    expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
  });

  it("holds back only the key whose oldest row fails, and keeps its order once it recovers", async () => {
    // Keys round-robin: key-0, key-1, key-2, key-0, …; the first key-0 row fails.
    const ids = await enqueueAll(bed.handle, events("ledger", 9, 3));
    await control.set({
      topics: [bed.fifo.topicArn],
      failBatchEntries: { attribute: "event_id", values: [ids[0] ?? ""] },
    });
    start();
    await expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 10_000 }).toBe(6);
    const keyZero = [ids[0], ids[3], ids[6]].map((id) => id ?? "");
    await expect
      .poll(async () => ((await attemptsOf(keyZero))[0]?.attempts ?? 0) >= 2, { timeout: 10_000 })
      .toBe(true);
    const held = await attemptsOf(keyZero);
    expect(held.map((row) => row.published_at)).toEqual([null, null, null]);
    // The later rows of the failing key were never attempted: they wait behind it.
    expect(held.slice(1).map((row) => row.attempts)).toEqual([0, 0]);

    await control.clear();
    await expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 10_000 }).toBe(9);
    const received = await receiveAll(bed.sqs, bed.fifo.queueUrl, 9);
    const keyZeroOrder = received
      .map((m) => (JSON.parse(m.body) as { n: number }).n)
      .filter((n) => n % 3 === 0);
    expect(keyZeroOrder).toEqual([0, 3, 6]);
  });

  it("marks a row dead after RELAY_MAX_ATTEMPTS failures, with the last error", async () => {
    const ids = await enqueueAll(bed.handle, events("orders", 5));
    await control.set({
      topics: [bed.standard.topicArn],
      failBatchEntries: { attribute: "event_id", values: [ids[2] ?? ""] },
    });
    const relay = start({ maxAttempts: 3 });
    const dead: string[] = [];
    relay.on("dead", (event) => dead.push(event.id));
    await expect.poll(() => dead, { timeout: 10_000 }).toEqual([ids[2]]);
    const [row] = await attemptsOf([ids[2] ?? ""]);
    expect(row).toMatchObject({
      attempts: 3,
      published_at: null,
      last_error: expect.stringMatching(/InternalError/),
    });
    expect(row?.dead_at).toBeInstanceOf(Date);
    expect(await countRows(bed.handle)).toEqual({ unsent: 0, published: 4, dead: 1 });
    expect(await stop(relay)).toMatchObject({ clean: true, published: 4, dead: 1, unsent: 0 });
  });

  it("backs off while the bus hangs or fails, spending no attempts, loses nothing, and recovers when it returns", async () => {
    const ids = await enqueueAll(bed.handle, events("orders", 30, 3));
    await control.set({ topics: [bed.standard.topicArn], hang: true });
    const deferred = countDeferred(start({ publishTimeoutMs: 500 }));
    // Each key's head sent back twice: the requests timed out at least twice.
    await expect.poll(deferred, { timeout: 10_000 }).toBeGreaterThanOrEqual(6);
    await control.set({ topics: [bed.standard.topicArn], failureRate: 1, failureMode: "internal-error" });
    const hungDeferrals = deferred();
    await expect.poll(deferred, { timeout: 10_000 }).toBeGreaterThanOrEqual(hungDeferrals + 6);
    expect((await countRows(bed.handle)).published).toBe(0);
    // Whole-request failures are the bus's, not the rows': no attempt was counted.
    expect((await attemptsOf(ids)).map((row) => row.attempts)).toEqual(ids.map(() => 0));
    await control.clear();
    await expect
      .poll(() => countRows(bed.handle), { timeout: 15_000 })
      .toEqual({ unsent: 0, published: 30, dead: 0 });
    // A hung request is dropped, never executed late; so each event arrives once.
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 30);
    expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
    expect(received).toHaveLength(30);
  });

  it("a 200 with an empty, truncated or HTML body marks nothing published; the rows go out once SNS answers", async () => {
    for (const okBody of ["empty", "truncated", "html"] as const) {
      const ids = await enqueueAll(bed.handle, events("orders", 10));
      await control.set({ topics: [bed.standard.topicArn], actions: ["PublishBatch"], okBody });
      const registry = new Registry();
      const { log, lines } = capturingLogger();
      const relay = start({ maxAttempts: 2, metrics: registry, log });
      const deferred = countDeferred(relay);
      // Every row came back more often than RELAY_MAX_ATTEMPTS would allow, and none died.
      await expect.poll(deferred, { timeout: 10_000 }).toBeGreaterThanOrEqual(10 * 3);
      expect(await countRows(bed.handle)).toMatchObject({ published: 0, dead: 0 });
      const malformed = await metricValue(registry, RELAY_METRICS.requestFailures, { kind: "malformed" });
      expect(malformed).toBeGreaterThanOrEqual(3);
      // One line per malformed answer, each with SNS's request id.
      const said = lines.filter((line) => String(line.msg).startsWith("PublishBatch answer malformed"));
      expect(said.length, okBody).toBeGreaterThanOrEqual(malformed);
      expect(said.length, okBody).toBeLessThanOrEqual(
        await metricValue(registry, RELAY_METRICS.requestFailures, { kind: "malformed" }),
      );
      for (const line of said) expect(line.requestId, okBody).toMatch(/^[0-9a-f-]{36}$/);

      await control.clear();
      await expect
        .poll(() => countRows(bed.handle), { timeout: 15_000 })
        .toEqual({ unsent: 0, published: 10, dead: 0 });
      await stop(relay);
      const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 10);
      expect(received, okBody).toHaveLength(10);
      expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
      await sql`TRUNCATE outbox`.execute(bed.handle.db);
    }
  });

  it("a whole-request outage many times longer than RELAY_MAX_ATTEMPTS allows kills nothing and keeps per-key order", async () => {
    const keys = 6;
    const maxAttempts = 3;
    const ids = await enqueueAll(bed.handle, events("ledger", 60, keys));
    // SNS down for the FIFO topic: every PublishBatch a 500, then throttled, then timing out.
    await control.set({ topics: [bed.fifo.topicArn], failureRate: 1, failureMode: "internal-error" });
    const registry = new Registry();
    const relay = start({ maxAttempts, metrics: registry, publishTimeoutMs: 500 });
    const deferred = countDeferred(relay);
    // Load keeps coming during the outage.
    const during = await enqueueAll(bed.handle, events("ledger", 30, keys, 60));
    // Each key's head sent back 5× as often as RELAY_MAX_ATTEMPTS would have let it fail.
    const outage = keys * maxAttempts * 5;
    await expect.poll(deferred, { timeout: 20_000 }).toBeGreaterThanOrEqual(outage / 3);
    await control.set({ topics: [bed.fifo.topicArn], failureRate: 1, failureMode: "throttling" });
    await expect.poll(deferred, { timeout: 20_000 }).toBeGreaterThanOrEqual((2 * outage) / 3);
    await control.set({ topics: [bed.fifo.topicArn], hang: true });
    await expect.poll(deferred, { timeout: 20_000 }).toBeGreaterThanOrEqual(outage);
    expect(await countRows(bed.handle)).toEqual({ unsent: 90, published: 0, dead: 0 });
    // Visible while it lasts: the topic is in outage and the failed requests are counted by kind.
    expect(await metricValue(registry, RELAY_METRICS.topicsInOutage)).toBe(1);
    for (const kind of ["server", "throttling", "network"]) {
      expect(await metricValue(registry, RELAY_METRICS.requestFailures, { kind }), kind).toBeGreaterThan(0);
    }

    await control.clear();
    await expect
      .poll(() => countRows(bed.handle), { timeout: 20_000 })
      .toEqual({ unsent: 0, published: 90, dead: 0 });
    expect(await metricValue(registry, RELAY_METRICS.topicsInOutage)).toBe(0);
    const received = await receiveAll(bed.sqs, bed.fifo.queueUrl, 90);
    expect(received).toHaveLength(90);
    expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set([...ids, ...during]));
    for (const ns of orderPerKey(received, keys).values()) expect(ns).toEqual([...ns].sort((x, y) => x - y));
  });

  it("a row whose entry SNS refuses dies after RELAY_MAX_ATTEMPTS and holds its key until skip-dead", async () => {
    const keys = 3;
    // Keys round-robin: key-0 holds ids 0, 3, 6; its head is refused every time.
    const ids = await enqueueAll(bed.handle, events("ledger", 9, keys));
    const head = ids[0] ?? "";
    await control.set({
      topics: [bed.fifo.topicArn],
      failBatchEntries: { attribute: "event_id", values: [head] },
    });
    const registry = new Registry();
    const relay = start({ maxAttempts: 2, metrics: registry });
    const dead: string[] = [];
    relay.on("dead", (event) => dead.push(event.id));
    await expect.poll(() => dead, { timeout: 10_000 }).toEqual([head]);
    await expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 10_000 }).toBe(6);
    // An event enqueued after the death on another key: once it is out, the relay has claimed since,
    // and key-0's later events (older than it) would have gone with it had the dead head let them.
    await control.clear();
    const [marker] = await enqueueAll(bed.handle, events("ledger", 1, keys, 9 + 1));
    await expect
      .poll(async () => (await attemptsOf([marker ?? ""]))[0]?.published_at, { timeout: 10_000 })
      .toBeInstanceOf(Date);
    const waiting = await attemptsOf([ids[3] ?? "", ids[6] ?? ""]);
    expect(waiting.map((row) => [row.published_at, row.attempts])).toEqual([
      [null, 0],
      [null, 0],
    ]);
    expect(await metricValue(registry, RELAY_METRICS.blockedKeys)).toBe(1);
    const env = { DATABASE_URL: bed.url };
    const status = await runEntryPoint("apps/relay/src/main.ts", ["status", "--json"], env);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as {
      total: { blockedKeys: number };
      blockedKeys: { orderingKey: string; eventId: string; waiting: number }[];
    };
    expect(report.total.blockedKeys).toBe(1);
    expect(report.blockedKeys).toEqual([
      expect.objectContaining({ orderingKey: "key-0", eventId: head, waiting: 2 }),
    ]);

    const skip = await runEntryPoint("apps/relay/src/main.ts", ["skip-dead", "--id", head], env);
    expect(skip.code, skip.stderr).toBe(0);
    expect(JSON.parse(skip.stdout)).toEqual({ skipped: 1 });
    await expect
      .poll(() => countRows(bed.handle), { timeout: 10_000 })
      .toEqual({ unsent: 0, published: 9, dead: 1 });
    expect(await metricValue(registry, RELAY_METRICS.blockedKeys)).toBe(0);
    const received = await receiveAll(bed.sqs, bed.fifo.queueUrl, 9);
    expect(received).toHaveLength(9);
    expect(orderPerKey(received, keys).get(0)).toEqual([3, 6]);
    // Skipped, not forgotten: it is still dead, and skipping it again finds nothing.
    const again = await runEntryPoint("apps/relay/src/main.ts", ["skip-dead", "--id", head], env);
    expect(again.code).toBe(1);
  });

  it("an aborted PublishBatch is cut on the wire, not only given up on, also by a client caching its middleware", async () => {
    await control.set({ topics: [bed.standard.topicArn], hang: true });
    const agent = new http.Agent({ keepAlive: true });
    // The socket timeout far away: only the abort can free the socket within the poll below.
    const { sns } = awsClients({
      sns: {
        cacheMiddleware: true,
        maxAttempts: 1,
        requestHandler: { httpAgent: agent, requestTimeout: 60_000 },
      },
    });
    const publisher = createSnsPublisher(sns);
    const socketsInUse = () => Object.values(agent.sockets).flat().length;
    try {
      // The second call goes through the middleware stack the first one composed and cached.
      for (const id of ["first", "second"]) {
        const call = new AbortController();
        const sent = publisher.publishBatch(
          { topicArn: bed.standard.topicArn, entries: [{ id, message: "{}", attributes: {} }] },
          Deadline.after(Number.POSITIVE_INFINITY, call.signal),
        );
        await expect.poll(socketsInUse).toBe(1);
        call.abort(new Error("deadline"));
        await expect(sent).rejects.toMatchObject({ name: "AbortError" });
        await expect.poll(socketsInUse, { timeout: 10_000 }).toBe(0);
      }
    } finally {
      sns.destroy();
    }
  });

  it("an abort during the SDK's wait between retries releases the caller at once, and the retry is never sent", async () => {
    await control.set({
      topics: [bed.standard.topicArn],
      actions: ["PublishBatch"],
      failureRate: 1,
      failureMode: "internal-error",
    });
    // A fresh socket per request: the sockets the agent opens are the requests that went out.
    let connections = 0;
    const agent = new (class extends http.Agent {
      override createConnection(...args: Parameters<http.Agent["createConnection"]>) {
        connections += 1;
        return super.createConnection(...args);
      }
    })({ keepAlive: false });
    // One retry, after a wait long enough that only the abort can end the call during it.
    const retryToken = (count: number) => ({ getRetryCount: () => count, getRetryDelay: () => 1_000 });
    let refreshed = 0;
    const { sns } = awsClients({
      sns: {
        cacheMiddleware: true,
        requestHandler: { httpAgent: agent, requestTimeout: 60_000 },
        retryStrategy: {
          mode: "standard",
          acquireInitialRetryToken: async () => retryToken(0),
          refreshRetryTokenForRetry: async (token) => {
            if (token.getRetryCount() >= 1) throw new Error("one retry only");
            refreshed += 1;
            return retryToken(token.getRetryCount() + 1);
          },
          recordSuccess: () => {},
        },
      },
    });
    const publisher = createSnsPublisher(sns);
    // What the SDK hands its HTTP handler, attempt by attempt, and how each one ended.
    const { requestHandler } = sns.config;
    const handle = requestHandler.handle.bind(requestHandler);
    const handled: Promise<unknown>[] = [];
    requestHandler.handle = (...args: Parameters<typeof handle>) => {
      const attempt = handle(...args);
      handled.push(attempt);
      return attempt;
    };
    try {
      const call = new AbortController();
      const sent = publisher.publishBatch(
        { topicArn: bed.standard.topicArn, entries: [{ id: "retried", message: "{}", attributes: {} }] },
        Deadline.after(Number.POSITIVE_INFINITY, call.signal),
      );
      // The first attempt failed with a 500 and the SDK is waiting to retry.
      await expect.poll(() => refreshed).toBe(1);
      call.abort(new Error("deadline"));
      await expect(sent).rejects.toMatchObject({ name: "AbortError" });
      // Released before the wait ended: the SDK has not even tried again yet.
      expect(handled).toHaveLength(1);
      // When it does, the retry is refused before a request is made.
      await expect.poll(() => handled.length, { timeout: 5_000 }).toBe(2);
      await expect(handled[1]).rejects.toMatchObject({ name: "AbortError" });
      expect(connections).toBe(1);
    } finally {
      sns.destroy();
    }
  });

  describe("the pipeline (RELAY_PIPELINE_DEPTH)", () => {
    /** Samples, every 10 ms until `most` is called, how many rows `relayId` holds leased. */
    const sampleLeased = (relayId: string) => {
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await sql<{ n: string }>`
            SELECT count(*) AS n FROM outbox WHERE locked_by = ${relayId} AND published_at IS NULL
          `.execute(bed.handle.db);
          most = Math.max(most, Number(rows[0]?.n));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      return {
        /** Stops sampling; the most rows seen leased at once. */
        async most() {
          sampling = false;
          await sampler;
          return most;
        },
      };
    };
    const allPublished = (count: number) =>
      expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 20_000 }).toBe(count);

    it("claims the next batch while the current one is still publishing, and only at depth > 1", async () => {
      // One chunk per batch, 300 ms per PublishBatch: each batch is in flight for a while.
      await control.set({ topics: [bed.standard.topicArn], actions: ["PublishBatch"], latencyMs: 300 });
      await enqueueAll(bed.handle, events("orders", 40));
      const serial = start({ batchSize: 10, pipelineDepth: 1, relayId: "serial" });
      const serialLeased = sampleLeased("serial");
      await allPublished(40);
      expect(await serialLeased.most()).toBeLessThanOrEqual(10);
      await stop(serial);

      await enqueueAll(bed.handle, events("orders", 40));
      const overlapped = start({ batchSize: 10, pipelineDepth: 3, relayId: "overlapped" });
      const overlappedLeased = sampleLeased("overlapped");
      await allPublished(80);
      // Three batches leased at once: one publishing, two claimed while it was.
      expect(await overlappedLeased.most()).toBe(30);
      expect(await stop(overlapped)).toMatchObject({ clean: true, published: 40, unsent: 0 });
      const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 80);
      expect(received).toHaveLength(80);
    });

    it("keeps per-key order when a key's row fails while later rows of that key wait in the backlog", async () => {
      // 4 keys, batches of 8 (two rows per key): every claim ahead meets only keys held by the batch
      // in flight. The first row of key-0 fails for a while; its key must wait behind it.
      const ids = await enqueueAll(bed.handle, events("ledger", 200, 4));
      await control.set({
        topics: [bed.fifo.topicArn],
        latencyMs: 50,
        failBatchEntries: { attribute: "event_id", values: [ids[0] ?? ""] },
      });
      start({ batchSize: 8, pipelineDepth: 2 });
      await expect
        .poll(async () => (await attemptsOf([ids[0] ?? ""]))[0]?.attempts ?? 0, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(2);
      await control.clear();
      await allPublished(200);
      const received = await receiveAll(bed.sqs, bed.fifo.queueUrl, 200);
      expect(received).toHaveLength(200);
      const byKey = new Map<number, number[]>();
      for (const message of received) {
        const { n } = JSON.parse(message.body) as { n: number };
        byKey.set(n % 4, [...(byKey.get(n % 4) ?? []), n]);
      }
      for (const ns of byKey.values()) expect(ns).toEqual([...ns].sort((x, y) => x - y));
    });
  });

  describe("the daemon, stopped while it publishes", () => {
    const daemonEnv = (extra: Record<string, string>) => {
      const { aws } = stack();
      return {
        DATABASE_URL: bed.url,
        LOG_LEVEL: "info",
        ...awsEnvironment(aws),
        RELAY_TOPIC_ARNS: `orders=${bed.standard.topicArn}`,
        RELAY_POLL_INTERVAL_MS: "100",
        ...extra,
      };
    };
    const relayIsPublishing = () =>
      expect
        .poll(
          async () =>
            (
              await sql<{ n: string }>`SELECT count(*) AS n FROM outbox WHERE locked_by IS NOT NULL`.execute(
                bed.handle.db,
              )
            ).rows[0]?.n,
          {
            timeout: 20_000,
            interval: 20,
          },
        )
        .not.toBe("0");

    it("on SIGTERM during the first batch: the batch completes, published=100 unsent=50, exit 0; a restart sends the rest", async () => {
      const ids = await enqueueAll(bed.handle, events("orders", 150));
      // 10 chunks, 2 at a time, 250 ms each: the first batch takes ~1.25 s.
      await control.set({ topics: [bed.standard.topicArn], actions: ["PublishBatch"], latencyMs: 250 });
      const first = startDaemonProcess(
        "apps/relay/src/main.ts",
        daemonEnv({ RELAY_BATCH_SIZE: "100", RELAY_PUBLISH_CONCURRENCY: "2" }),
      );
      await relayIsPublishing();
      first.child.kill("SIGTERM");
      expect((await first.exited).code).toBe(0);
      const drained = first.lines.find((line) => line.msg === "drained");
      expect(drained).toMatchObject({ clean: true, published: 100, unsent: 50, dead: 0 });
      expect(Number(drained?.published) + Number(drained?.unsent)).toBe(150);
      expect(await countRows(bed.handle)).toEqual({ unsent: 50, published: 100, dead: 0 });

      await control.clear();
      const second = startDaemonProcess("apps/relay/src/main.ts", daemonEnv({}));
      await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
      second.child.kill("SIGTERM");
      expect((await second.exited).code).toBe(0);
      expect(second.lines.find((line) => line.msg === "drained")).toMatchObject({
        clean: true,
        published: 50,
        unsent: 0,
      });
      const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 150);
      expect(received).toHaveLength(150);
      expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
    });

    it("on SIGTERM, starts no wave the drain budget cannot finish: the rest is released, clean=true, and a restart sends nothing twice", async () => {
      const keys = 5;
      // One batch of 100 keyed rows: 20 waves, one PublishBatch each, 400 ms apiece (~8 s), against a
      // 3 s drain in which a request may take up to 1 s: waves start only in the drain's first 2 s.
      const ids = await enqueueAll(bed.handle, events("orders", 100, keys));
      await control.set({ topics: [bed.standard.topicArn], actions: ["PublishBatch"], latencyMs: 400 });
      const run = startDaemonProcess(
        "apps/relay/src/main.ts",
        daemonEnv({
          RELAY_DRAIN_TIMEOUT_MS: "3000",
          DB_STATEMENT_TIMEOUT_MS: "500",
          AWS_REQUEST_TIMEOUT_MS: "1000",
          AWS_MAX_ATTEMPTS: "1",
        }),
      );
      await relayIsPublishing();
      run.child.kill("SIGTERM");
      expect((await run.exited).code).toBe(0);
      const drained = run.lines.find((line) => line.msg === "drained");
      // No request was cut: the deadline never fired on one.
      expect(drained).toMatchObject({ clean: true, dead: 0 });
      const rows = await countRows(bed.handle);
      expect(rows.published).toBe(drained?.published);
      // What was not sent was released: counted as unsent, and not leased for RELAY_LEASE_MS.
      expect(rows.unsent).toBe(drained?.unsent);
      expect(rows.published + rows.unsent).toBe(100);
      expect(rows.unsent).toBeGreaterThan(0);
      const leased = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM outbox WHERE locked_until IS NOT NULL`.execute(bed.handle.db);
      expect(leased.rows[0]?.n).toBe("0");
      console.info(
        `SIGTERM mid-waves: ${rows.published} published, ${rows.unsent} released unsent, drain ${drained?.drainMs} ms`,
      );

      await control.clear();
      start();
      await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
      // Every event received exactly once: no wave the stop cut reached SNS to be sent again.
      const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 100);
      expect(received).toHaveLength(100);
      expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
      for (const ns of orderPerKey(received, keys).values())
        expect(ns).toEqual([...ns].sort((x, y) => x - y));
    });

    it("killed with SIGKILL mid-batch, re-sends at most the chunks that were in flight", async () => {
      const ids = await enqueueAll(bed.handle, events("orders", 100));
      await control.set({ topics: [bed.standard.topicArn], actions: ["PublishBatch"], latencyMs: 300 });
      const concurrency = 2;
      const run = startDaemonProcess(
        "apps/relay/src/main.ts",
        daemonEnv({
          // Batches of 20 with two more claimed ahead: the rows of those have not been sent, so they
          // come back when the lease ends and are published once; only chunks in flight are re-sent.
          RELAY_BATCH_SIZE: "20",
          RELAY_PIPELINE_DEPTH: "3",
          RELAY_PUBLISH_CONCURRENCY: String(concurrency),
          RELAY_LEASE_MS: "3000",
          RELAY_DRAIN_TIMEOUT_MS: "2000",
          DB_STATEMENT_TIMEOUT_MS: "500",
          AWS_REQUEST_TIMEOUT_MS: "1000",
          AWS_MAX_ATTEMPTS: "1",
        }),
      );
      await expect
        .poll(async () => (await countRows(bed.handle)).published, { timeout: 20_000, interval: 20 })
        .toBeGreaterThanOrEqual(30);
      run.child.kill("SIGKILL");
      await run.exited;
      const markedBeforeKill = (await countRows(bed.handle)).published;
      expect(markedBeforeKill).toBeLessThan(100);

      await control.clear();
      start();
      await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 15_000 }).toBe(0);
      const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 100);
      expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
      const resent = received.length - 100;
      console.info(`SIGKILL mid-batch: ${markedBeforeKill} marked before the kill, ${resent} events re-sent`);
      expect(resent).toBeLessThanOrEqual(concurrency * 10);
    });
  });
});
