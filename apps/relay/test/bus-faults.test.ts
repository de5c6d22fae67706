import http from "node:http";
import { awsEnvironment } from "@outbox/devstack";
import { awsClients, faultClient, receiveAll, stack, startDaemonProcess } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { createSnsPublisher } from "../src/index.js";
import { countRows, enqueueAll, events, useRelayTestBed } from "./harness.js";

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

  it("backs off while the bus hangs or fails, loses nothing, and recovers when it returns", async () => {
    const ids = await enqueueAll(bed.handle, events("orders", 30, 3));
    await control.set({ topics: [bed.standard.topicArn], hang: true });
    start({ publishTimeoutMs: 500 });
    await expect
      .poll(async () => (await attemptsOf(ids)).some((row) => row.attempts >= 2), { timeout: 10_000 })
      .toBe(true);
    await control.set({ topics: [bed.standard.topicArn], failureRate: 1, failureMode: "internal-error" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await countRows(bed.handle)).published).toBe(0);
    await control.clear();
    await expect
      .poll(() => countRows(bed.handle), { timeout: 15_000 })
      .toEqual({ unsent: 0, published: 30, dead: 0 });
    // A hung request is dropped, never executed late; so each event arrives once.
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 30);
    expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
    expect(received).toHaveLength(30);
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
          call.signal,
        );
        await expect.poll(socketsInUse).toBe(1);
        call.abort(new Error("deadline"));
        await expect(sent).rejects.toMatchObject({ name: "AbortError" });
        await expect.poll(socketsInUse, { timeout: 1_000 }).toBe(0);
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
        call.signal,
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

    it("at the drain deadline: exits 0 with clean=false, and the released rows go to the next relay at once", async () => {
      const ids = await enqueueAll(bed.handle, events("orders", 100));
      // 10 chunks one at a time, 400 ms each (~4 s), against a 1 s drain.
      await control.set({ topics: [bed.standard.topicArn], actions: ["PublishBatch"], latencyMs: 400 });
      const run = startDaemonProcess(
        "apps/relay/src/main.ts",
        daemonEnv({
          RELAY_PUBLISH_CONCURRENCY: "1",
          RELAY_DRAIN_TIMEOUT_MS: "1000",
          DB_STATEMENT_TIMEOUT_MS: "500",
          AWS_REQUEST_TIMEOUT_MS: "900",
          AWS_MAX_ATTEMPTS: "1",
        }),
      );
      await relayIsPublishing();
      run.child.kill("SIGTERM");
      expect((await run.exited).code).toBe(0);
      const drained = run.lines.find((line) => line.msg === "drained");
      expect(drained).toMatchObject({ clean: false, dead: 0 });
      const rows = await countRows(bed.handle);
      expect(rows.published).toBe(drained?.published);
      expect(rows.unsent).toBe(drained?.unsent);
      expect(rows.published + rows.unsent).toBe(100);
      expect(rows.unsent).toBeGreaterThan(0);
      // Released, not left to a lease that would hold them for RELAY_LEASE_MS (60 s).
      const leased = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM outbox WHERE locked_until IS NOT NULL`.execute(bed.handle.db);
      expect(leased.rows[0]?.n).toBe("0");

      await control.clear();
      start();
      // Well inside the 60 s lease: a row still leased could not be sent before it ran out.
      await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
      const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 100);
      expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
      // Only a request cut off in flight may have reached the bus before the cut: at most one chunk.
      expect(received.length - 100).toBeLessThanOrEqual(10);
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
