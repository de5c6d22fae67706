import { enqueue } from "@outbox/client";
import { describe, expect, it } from "vitest";
import { clearOutbox, countRows, events, relayAsleep, useRelayTestBed } from "./harness.js";

// A poll this long never fires within a test: whatever publishes here, a wake-up did.
const bed = useRelayTestBed("wakeup", { defaults: { pollIntervalMs: 600_000 } });

/** Long enough for a relay that missed a wake-up to be blocked in its sleep. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe("the relay's wake-up: writers notify only a sleeping relay, and none is lost", () => {
  it("sleeps without polling and wakes for an insert", async () => {
    await clearOutbox(bed.handle);
    const relay = bed.start();
    await expect.poll(() => relayAsleep(bed.handle)).toBe(true);
    await settle();
    await enqueue(bed.handle.db, events("orders", 1));
    await expect.poll(() => countRows(bed.handle), { timeout: 30_000 }).toMatchObject({ published: 1 });
    await bed.stop(relay);
  });

  it("publishes a row inserted before it went to sleep and committed after, without waiting for the poll", async () => {
    await clearOutbox(bed.handle);
    let commit: () => void = () => {};
    const committed = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let inserted: () => void = () => {};
    const insertDone = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    // No relay is asleep while this inserts, so it sends no NOTIFY: the relay must find it by itself.
    const writer = bed.handle.db.transaction().execute(async (trx) => {
      await enqueue(trx, events("orders", 1));
      inserted();
      await committed;
    });
    await insertDone;
    const relay = bed.start();
    await expect.poll(() => relayAsleep(bed.handle)).toBe(true);
    await settle();
    commit();
    await writer;
    await expect.poll(() => countRows(bed.handle), { timeout: 30_000 }).toMatchObject({ published: 1 });
    await bed.stop(relay);
  });
});
