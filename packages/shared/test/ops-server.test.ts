import http from "node:http";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import { createLogger } from "../src/index.js";
import { LoopWatch } from "../src/ops/loop-watch.js";
import { createMetricsRegistry } from "../src/ops/metrics-registry.js";
import { startOpsServer } from "../src/ops/ops-server.js";

const log = createLogger({ service: "ops-test", version: "0", level: "silent" });

function get(
  port: number,
  path: string,
  agent: http.Agent,
): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent }, (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }),
        );
      })
      .on("error", reject);
  });
}

describe("ops server", () => {
  it("serves livez, readyz and metrics, and readyz follows readiness", async () => {
    const metrics = createMetricsRegistry("ops-test");
    const ops = await startOpsServer({ host: "127.0.0.1", port: 0, metrics, log });
    const agent = new http.Agent({ keepAlive: true });
    expect((await get(ops.port, "/livez", agent)).status).toBe(200);
    expect((await get(ops.port, "/readyz", agent)).status).toBe(503);
    ops.setReady(true);
    expect((await get(ops.port, "/readyz", agent)).status).toBe(200);
    const scrape = await get(ops.port, "/metrics", agent);
    expect(scrape.body).toContain('process_cpu_seconds_total{service="ops-test"}');
    expect((await get(ops.port, "/nope", agent)).status).toBe(404);
    await ops.close();
    agent.destroy();
  });

  it("answers 503 with the worker's reason while it gives one, 200 again once it does not", async () => {
    const metrics = createMetricsRegistry("ops-test");
    const ops = await startOpsServer({ host: "127.0.0.1", port: 0, metrics, log });
    const agent = new http.Agent({ keepAlive: true });
    let reason: string | undefined = "intake paused: database unreachable";
    ops.readyUnless(() => reason);
    ops.setReady(true);
    expect(await get(ops.port, "/readyz", agent)).toMatchObject({
      status: 503,
      body: "intake paused: database unreachable\n",
    });
    reason = undefined;
    expect(await get(ops.port, "/readyz", agent)).toMatchObject({ status: 200, body: "ready\n" });
    // A stopping daemon is not ready, whatever the worker says.
    ops.setReady(false);
    expect(await get(ops.port, "/readyz", agent)).toMatchObject({ status: 503, body: "not ready\n" });
    await ops.close();
    agent.destroy();
  });

  it("answers /livez 503 with the loop's reason in a JSON field while a step runs past its bound, 200 once it ends", async () => {
    const metrics = createMetricsRegistry("ops-test");
    const ops = await startOpsServer({ host: "127.0.0.1", port: 0, metrics, log });
    const agent = new http.Agent({ keepAlive: true });
    const watch = new LoopWatch({ loop: "poll loop", step: "receive", boundMs: 50 });
    ops.liveUnless(() => watch.stalled());
    expect(await get(ops.port, "/livez", agent)).toMatchObject({ status: 200, body: '{"status":"ok"}\n' });
    // A step that ends on its own, however often, is no stall; one that never does is, once past its bound.
    await watch.step(async () => "turned");
    let endStep: (value: string) => void = () => {};
    const running = watch.step(
      () =>
        new Promise<string>((resolve) => {
          endStep = resolve;
        }),
    );
    await expect
      .poll(async () => (await get(ops.port, "/livez", agent)).status, { timeout: 10_000, interval: 20 })
      .toBe(503);
    const stalled = JSON.parse((await get(ops.port, "/livez", agent)).body) as Record<string, unknown>;
    expect(stalled).toEqual({
      status: "stalled",
      reason: expect.stringMatching(
        /^poll loop stalled: a receive has been running for \d+ ms, past its bound of 50 ms$/,
      ),
    });
    endStep("turned at last");
    expect(await running).toBe("turned at last");
    expect(await get(ops.port, "/livez", agent)).toMatchObject({ status: 200 });
    await ops.close();
    agent.destroy();
  });

  it("lets an in-flight scrape finish during close, far sooner than the 65 s keep-alive", async () => {
    const metrics = createMetricsRegistry("ops-test");
    // A collector as slow as a gauge that queries the database.
    new Gauge({
      name: "slow_gauge",
      help: "answers after 400 ms",
      registers: [metrics],
      async collect() {
        await new Promise((resolve) => setTimeout(resolve, 400));
        this.set(7);
      },
    });
    const ops = await startOpsServer({ host: "127.0.0.1", port: 0, metrics, log });
    const agent = new http.Agent({ keepAlive: true });
    await get(ops.port, "/livez", agent); // leaves an idle keep-alive socket behind
    const inFlight = get(ops.port, "/metrics", agent);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await ops.close();
    const closeMs = performance.now() - started;
    const scrape = await inFlight;
    expect(scrape.status).toBe(200);
    expect(scrape.body).toContain("slow_gauge");
    expect(scrape.connection).toBe("close");
    expect(closeMs).toBeLessThan(5_000);
    agent.destroy();
  });

  it("binds the address it is given", async () => {
    const metrics = createMetricsRegistry("ops-test");
    const ops = await startOpsServer({ host: "127.0.0.2", port: 0, metrics, log });
    const agent = new http.Agent();
    const answer = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: "127.0.0.2", port: ops.port, path: "/livez", agent }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on("error", reject);
    });
    expect(answer).toBe(200);
    // Nothing listens on the other loopback address: the server is bound to one address, not all.
    await expect(
      new Promise((resolve, reject) => {
        const socket = net.connect({ host: "127.0.0.1", port: ops.port }, () => resolve(socket.end()));
        socket.on("error", reject);
      }),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await ops.close();
    agent.destroy();
  });

  it("closes a connection that trickles its headers at the 5 s headers timeout, not at Node's 30 s sweep", async () => {
    const metrics = createMetricsRegistry("ops-test");
    const ops = await startOpsServer({ host: "127.0.0.1", port: 0, metrics, log });
    const socket = net.connect({ host: "127.0.0.1", port: ops.port });
    await new Promise((resolve) => socket.once("connect", resolve));
    const started = performance.now();
    socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n");
    // A header line now and then: never complete, so only the headers timeout can end it.
    const trickle = setInterval(() => socket.write("X-Slow: 1\r\n"), 500);
    let reply = "";
    socket.on("data", (chunk) => {
      reply += chunk;
    });
    await new Promise((resolve) => socket.once("close", resolve));
    clearInterval(trickle);
    const closedAfterMs = performance.now() - started;
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeGreaterThanOrEqual(4_900);
    // Without the sweep interval set, Node closes it at its 30 s check.
    expect(closedAfterMs).toBeLessThan(20_000);
    await ops.close();
  });
});
