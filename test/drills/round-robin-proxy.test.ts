import http from "node:http";
import type { AddressInfo } from "node:net";
import { startRoundRobinProxy } from "@outbox/drills";
import { afterEach, describe, expect, it } from "vitest";

const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function replica(name: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.end(name));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  closers.push(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

async function answers(url: string, count: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(url);
    const body = await response.text();
    bodies.push(response.ok ? `${response.status} ${body}` : String(response.status));
  }
  return bodies;
}

describe("the drill's round-robin proxy", () => {
  it("alternates over its list, keeps a replica that stopped accepting, and forgets one only when told", async () => {
    const a = await replica("a");
    const b = await replica("b");
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    closers.push(() => proxy.close());

    expect(await answers(proxy.url, 4)).toEqual(["200 a", "200 b", "200 a", "200 b"]);
    await a.close();
    expect(await answers(proxy.url, 2)).toEqual(["502", "200 b"]);
    proxy.remove(a.url);
    expect(proxy.targets()).toEqual([b.url]);
    expect(await answers(proxy.url, 2)).toEqual(["200 b", "200 b"]);
    proxy.remove(b.url);
    expect(await answers(proxy.url, 1)).toEqual(["503"]);
  });
});
