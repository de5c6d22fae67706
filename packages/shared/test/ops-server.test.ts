import http from "node:http";
import { performance } from "node:perf_hooks";
import { Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import { createLogger, createMetricsRegistry, startOpsServer } from "../src/index.js";

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
});
