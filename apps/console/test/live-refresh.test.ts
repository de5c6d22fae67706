import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { liveRefresh, MAX_BACKOFF_MS, type RefreshedPage } from "../src/assets/live-refresh.js";

const PERIOD_MS = 5_000;

/** A tab whose visibility the test sets, telling the refresh as a browser would. */
function tab(): RefreshedPage & { show(hidden: boolean): void } {
  const listeners: (() => void)[] = [];
  const page = {
    hidden: false,
    onVisibilityChange: (listener: () => void) => listeners.push(listener),
    show(hidden: boolean) {
      page.hidden = hidden;
      for (const listener of listeners) listener();
    },
  };
  return page;
}

/** A refresh the test answers by hand: how many were asked, how many are unanswered. */
function answeredByHand() {
  const pending: ((ok: boolean) => void)[] = [];
  let asked = 0;
  let mostInFlight = 0;
  const refresh = () =>
    new Promise<boolean>((resolve) => {
      asked += 1;
      pending.push(resolve);
      mostInFlight = Math.max(mostInFlight, pending.length);
    });
  return {
    refresh,
    answer(ok: boolean) {
      pending.shift()?.(ok);
    },
    get asked() {
      return asked;
    },
    get mostInFlight() {
      return mostInFlight;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the page's live refresh", () => {
  it("keeps one refresh in flight: a slow answer delays the next, never doubles it", async () => {
    const server = answeredByHand();
    liveRefresh(server.refresh, PERIOD_MS, tab());
    await vi.advanceTimersByTimeAsync(PERIOD_MS);
    expect(server.asked).toBe(1);
    // The console takes ten periods to answer: no second request meanwhile.
    await vi.advanceTimersByTimeAsync(10 * PERIOD_MS);
    expect(server.asked).toBe(1);
    server.answer(true);
    await vi.advanceTimersByTimeAsync(PERIOD_MS - 1);
    expect(server.asked).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(server.asked).toBe(2);
    expect(server.mostInFlight).toBe(1);
  });

  it("backs off after failures, doubling up to MAX_BACKOFF_MS, and comes back to the period on success", async () => {
    const server = answeredByHand();
    liveRefresh(server.refresh, PERIOD_MS, tab());
    const waits: number[] = [];
    let last = 0;
    for (let failures = 0; failures < 7; failures += 1) {
      while (server.asked === last) await vi.advanceTimersByTimeAsync(1_000);
      waits.push(Date.now());
      last = server.asked;
      server.answer(false);
    }
    const gaps = waits.slice(1).map((at, index) => at - (waits[index] ?? 0));
    expect(gaps).toEqual([10_000, 20_000, 40_000, MAX_BACKOFF_MS, MAX_BACKOFF_MS, MAX_BACKOFF_MS]);
    while (server.asked === last) await vi.advanceTimersByTimeAsync(1_000);
    server.answer(true);
    const after = Date.now();
    last = server.asked;
    while (server.asked === last) await vi.advanceTimersByTimeAsync(1_000);
    expect(Date.now() - after).toBe(PERIOD_MS);
  });

  it("asks nothing while the tab is hidden, and refreshes at once when it is shown again", async () => {
    const server = answeredByHand();
    const page = tab();
    liveRefresh(server.refresh, PERIOD_MS, page);
    await vi.advanceTimersByTimeAsync(PERIOD_MS);
    server.answer(true);
    expect(server.asked).toBe(1);
    page.show(true);
    await vi.advanceTimersByTimeAsync(100 * PERIOD_MS);
    expect(server.asked).toBe(1);
    page.show(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(server.asked).toBe(2);
    // Shown while a refresh is in flight: no second one.
    page.show(true);
    page.show(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(server.asked).toBe(2);
  });
});
