import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  Deadline,
  DeadlineExceededError,
  deadlineFetch,
  incomingDeadline,
  REQUEST_TIMEOUT_HEADER,
} from "../src/index.js";

// A real server that reports the budget it received and the deadline it derived from it.
let server: http.Server;
let baseUrl: string;
let requestsSeen = 0;
let connectionsSeen = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requestsSeen += 1;
    const deadline = incomingDeadline(req.headers[REQUEST_TIMEOUT_HEADER.toLowerCase()], 25_000);
    if (!deadline) {
      res.writeHead(504).end();
      return;
    }
    res.once("close", () => deadline.dispose());
    const body = JSON.stringify({
      header: req.headers[REQUEST_TIMEOUT_HEADER.toLowerCase()] ?? null,
      remainingMs: Math.round(deadline.remainingMs()),
    });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  server.on("connection", () => {
    connectionsSeen += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("deadline propagation", () => {
  it("sends the remaining milliseconds and the receiver adopts them", async () => {
    const deadline = Deadline.after(3_000);
    const response = await deadlineFetch(deadline, `${baseUrl}/work`);
    const body = (await response.json()) as { header: string; remainingMs: number };
    expect(Number(body.header)).toBeLessThanOrEqual(3_000);
    expect(Number(body.header)).toBeGreaterThan(2_950);
    expect(body.remainingMs).toBeLessThanOrEqual(Number(body.header));
    expect(body.remainingMs).toBeGreaterThan(2_900);
    deadline.dispose();
  });

  it("refuses to send when no time is left", async () => {
    const before = requestsSeen;
    const deadline = Deadline.after(0);
    await expect(deadlineFetch(deadline, `${baseUrl}/work`)).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(requestsSeen).toBe(before);
  });

  // The rule itself, not the aborted signal (which would cancel the fetch anyway): the clock is
  // stopped just short of the expiry, so the deadline has not aborted yet. Less than a whole
  // millisecond left is no time left: the header is a budget the callee may spend, so it is rounded
  // down, and `0` would be a request the callee must refuse (504) — load for nothing.
  it.each([0, 0.4, 0.999])(
    "with %d ms left and the deadline not yet aborted, nothing reaches the server",
    async (leftMs) => {
      const [requests, connections] = [requestsSeen, connectionsSeen];
      const deadline = Deadline.after(60_000);
      const clock = vi.spyOn(performance, "now").mockReturnValue(deadline.expiresAt - leftMs);
      let sending: Promise<Response>;
      try {
        // deadlineFetch decides before its first await: the clock can be restored at once.
        sending = deadlineFetch(deadline, `${baseUrl}/work`);
        expect(deadline.signal.aborted).toBe(false);
      } finally {
        clock.mockRestore();
      }
      // A request sent anyway would be answered (504 for `0`): the promise would resolve.
      await expect(sending).rejects.toBeInstanceOf(DeadlineExceededError);
      expect([requestsSeen, connectionsSeen]).toEqual([requests, connections]);
      deadline.dispose();
    },
  );

  it("with a millisecond and a fraction left, sends 1", async () => {
    const deadline = Deadline.after(60_000);
    const clock = vi.spyOn(performance, "now").mockReturnValue(deadline.expiresAt - 1.6);
    let sending: Promise<Response>;
    try {
      sending = deadlineFetch(deadline, `${baseUrl}/work`);
    } finally {
      clock.mockRestore();
    }
    const body = (await (await sending).json()) as { header: string };
    expect(body.header).toBe("1");
    deadline.dispose();
  });

  it("caps a generous caller at its own limit and ignores a malformed header", async () => {
    for (const header of ["60000", "soon", "12.5", "", "-0", "+5", "1e3", "99999999999999999999"]) {
      const response = await fetch(`${baseUrl}/work`, { headers: { [REQUEST_TIMEOUT_HEADER]: header } });
      const body = (await response.json()) as { remainingMs: number };
      expect(response.status).toBe(200);
      expect(body.remainingMs).toBeGreaterThan(24_900);
      expect(body.remainingMs).toBeLessThanOrEqual(25_000);
    }
  });

  it("answers 504 without work when the caller's budget is already spent", async () => {
    for (const header of ["0", "-5"]) {
      const response = await fetch(`${baseUrl}/work`, { headers: { [REQUEST_TIMEOUT_HEADER]: header } });
      expect(response.status).toBe(504);
    }
  });

  it("withGrace() expires its margin after the deadline aborts, however it aborts", async () => {
    const parent = new AbortController();
    const deadline = Deadline.after(60_000, parent.signal);
    const grace = deadline.withGrace(30);
    expect(grace.aborted).toBe(false);
    parent.abort();
    expect(grace.aborted).toBe(false);
    // Waits for the aborts themselves (bounded by the test's timeout): a fixed sleep raced the
    // grace's own timer on a loaded machine (both due in one turn of the timers, the sleep first).
    await expect(new Promise((resolve) => grace.onAbort(resolve))).resolves.toBeInstanceOf(
      DeadlineExceededError,
    );
    const expired = Deadline.after(0).withGrace(0);
    expect(expired.aborted).toBe(false);
    await expect(new Promise((resolve) => expired.onAbort(resolve))).resolves.toBeInstanceOf(
      DeadlineExceededError,
    );
    for (const each of [deadline, grace, expired]) each.dispose();
  });

  it("followingLater() never aborts on its own, then aborts with the deadline it follows, with the reason given", async () => {
    const later = Deadline.followingLater();
    const child = Deadline.after(60_000, later.deadline);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(child.aborted).toBe(false);
    const drain = Deadline.after(0);
    const reason = new Error("drain over");
    let seen: unknown;
    child.onAbort((why) => {
      seen = why;
    });
    const unlink = later.follow(drain, reason);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(child.aborted).toBe(true);
    expect(seen).toBe(reason);
    unlink();
    for (const each of [later.deadline, child, drain]) each.dispose();
  });

  it("never aborts before its expiry by performance.now(), though timers count whole milliseconds", async () => {
    // A loop kept busy checks its timers at every turn, so a timer fires at the first turn its
    // whole-millisecond clock allows: about half of them up to 1 ms before performance.now() says so.
    let busy = true;
    const turn = () => {
      if (busy) setImmediate(turn);
    };
    turn();
    const early: number[] = [];
    try {
      for (let attempt = 0; attempt < 50; attempt++) {
        const deadline = Deadline.after(3);
        await new Promise((resolve) => deadline.onAbort(resolve));
        const lateByMs = performance.now() - deadline.expiresAt;
        if (lateByMs < 0) early.push(lateByMs);
        deadline.dispose();
      }
    } finally {
      busy = false;
    }
    expect(early).toEqual([]);
  });

  it("min() takes the earlier deadline and aborts with either parent", () => {
    const parent = new AbortController();
    const long = Deadline.after(10_000, parent.signal);
    const short = Deadline.after(1_000);
    const both = long.min(short);
    expect(both.remainingMs()).toBeLessThanOrEqual(1_000);
    parent.abort();
    expect(both.signal.aborted).toBe(true);
    expect(both.remainingMs()).toBe(0);
    for (const deadline of [long, short, both]) deadline.dispose();
  });
});
