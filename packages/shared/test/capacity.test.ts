import { describe, expect, it } from "vitest";
import { Capacity } from "../src/lifecycle/capacity.js";

describe("Capacity", () => {
  it("reserves only free slots, waits for the minimum, and wakes waiters in order", async () => {
    const capacity = new Capacity(10);
    const never = new AbortController().signal;
    expect(await capacity.reserve(1, 10, never)).toBe(10);
    const first = capacity.reserve(5, 10, never);
    const second = capacity.reserve(1, 10, never);
    capacity.giveBack(3);
    capacity.giveBack(4);
    expect(await first).toBe(7);
    capacity.giveBack(2);
    expect(await second).toBe(2);
  });

  it("gives up waiting with 0 when intake stops", async () => {
    const capacity = new Capacity(1);
    const stop = new AbortController();
    expect(await capacity.reserve(1, 10, stop.signal)).toBe(1);
    const waiting = capacity.reserve(1, 10, stop.signal);
    stop.abort();
    expect(await waiting).toBe(0);
  });

  it("without a signal waits until the slots are free (the relay's publish capacity)", async () => {
    const capacity = new Capacity(1);
    expect(await capacity.reserve(1, 1)).toBe(1);
    let reserved: number | undefined;
    const waiting = capacity.reserve(1, 1).then((count) => {
      reserved = count;
    });
    await Promise.resolve();
    expect(reserved).toBeUndefined();
    capacity.giveBack(1);
    await waiting;
    expect(reserved).toBe(1);
  });
});
