import { describe, expect, it } from "vitest";
import { Pace, type PaceClock } from "../src/cli/republish-pace.js";

/** A clock that moves only when the pace waits: what was sent by when, counted, with no real time. */
function fakeClock(): PaceClock & { at: number } {
  const clock = {
    at: 0,
    now: () => clock.at,
    wait: async (ms: number) => {
      clock.at += ms;
    },
  };
  return clock;
}

describe("relay republish's pace", () => {
  it("never lets more than rate·t events plus one batch go by time t", async () => {
    for (const [rate, batch] of [
      [5, 5],
      [20, 10],
      [1, 1],
      [3, 2],
    ] as const) {
      const clock = fakeClock();
      const pace = new Pace(rate, clock);
      let sent = 0;
      for (let call = 0; call < 20; call += 1) {
        await pace.take(batch);
        // The batch goes now: what has gone, this batch included, against the time the pace let pass.
        sent += batch;
        expect(sent, `rate ${rate}, batch ${batch}, call ${call}`).toBeLessThanOrEqual(
          // (A thousandth of an event of room for the float sum of waits like 333.33… ms.)
          (rate * clock.at) / 1_000 + batch + 1e-3,
        );
      }
      // And it does not wait longer than it must: the 20th batch went when its first event was due.
      expect(clock.at).toBeCloseTo((19 * batch * 1_000) / rate, 6);
    }
  });

  it("keeps the rate on its own clock when a timer fires a fraction of a millisecond early", async () => {
    // What a real timer does against performance.now(): whole milliseconds of a stale loop time.
    const clock = {
      at: 0,
      now: () => clock.at,
      wait: async (ms: number) => {
        clock.at += ms > 1 ? ms - 0.6 : ms;
      },
    };
    const pace = new Pace(4, clock);
    let sent = 0;
    for (let call = 0; call < 5; call += 1) {
      await pace.take(4);
      sent += 4;
      // The elapsed time the pace reports is the one it kept: never short of what was sent.
      expect(sent, `call ${call}`).toBeLessThanOrEqual((4 * pace.elapsedMs()) / 1_000 + 4);
    }
  });

  it("does not wait for the first batch, nor when the sending itself was slower than the rate", async () => {
    const clock = fakeClock();
    const pace = new Pace(10, clock);
    await pace.take(10);
    expect(clock.at).toBe(0);
    // The send took 3 s: 30 events' worth of time, 10 sent; the next batch goes at once.
    clock.at += 3_000;
    await pace.take(10);
    expect(clock.at).toBe(3_000);
  });
});
