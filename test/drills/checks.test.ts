import {
  checkChaos,
  checkConsumerSigterm,
  checkRelaySigterm,
  checkRestartDrain,
  checkRollingRestart,
  checkSigkill,
  renderTable,
} from "@outbox/drills";
import { describe, expect, it } from "vitest";

// Each checker passes the run its expectation describes and fails every way of breaking it: a
// drill whose checker cannot fail proves nothing.
const clean = { code: 0, signal: null };
const killed = { code: null, signal: "SIGKILL" as const };
const delivered = { expected: 150, inbox: 150, effects: 150, duplicates: 0, queueDepth: 0, dlqDepth: 0 };

describe("drill checkers", () => {
  it("relay-sigterm: 100 + 50 = 150 with exit 0, nothing else", () => {
    const good = {
      total: 150,
      batchSize: 100,
      exit: clean,
      drained: { published: 100, unsent: 50, clean: true },
    };
    expect(checkRelaySigterm(good)).toMatchObject({
      pass: true,
      result: "batch completes; published=100 + unsent=50 = 150/150; clean=true; exit 0",
    });
    expect(checkRelaySigterm({ ...good, drained: { published: 60, unsent: 90, clean: true } })).toMatchObject(
      {
        pass: false,
        result: expect.stringContaining("batch cut at 60/100"),
      },
    );
    expect(checkRelaySigterm({ ...good, drained: { published: 100, unsent: 49, clean: true } }).pass).toBe(
      false,
    );
    expect(checkRelaySigterm({ ...good, drained: { published: 100, unsent: 50, clean: false } }).pass).toBe(
      false,
    );
    expect(checkRelaySigterm({ ...good, exit: { code: 1, signal: null } }).pass).toBe(false);
    expect(checkRelaySigterm({ ...good, exit: killed, drained: null })).toMatchObject({
      pass: false,
      result: "no drained line; killed by SIGKILL",
    });
  });

  it("consumer-sigterm: messages were in the handler, all finished, none left undeleted", () => {
    const good = {
      exit: clean,
      inHandlersAtStop: 10,
      undeletedAfterExit: 0,
      drained: { processed: 10, released: 0, clean: true },
    };
    expect(checkConsumerSigterm(good).pass).toBe(true);
    expect(checkConsumerSigterm({ ...good, undeletedAfterExit: 3 }).pass).toBe(false);
    expect(checkConsumerSigterm({ ...good, inHandlersAtStop: 0 }).pass).toBe(false);
    expect(checkConsumerSigterm({ ...good, exit: { code: 1, signal: null } }).pass).toBe(false);
    expect(checkConsumerSigterm({ ...good, drained: { processed: 4, released: 0, clean: false } }).pass).toBe(
      false,
    );
  });

  it("restart-drain: 150/150 and zero duplicate skips, empty queues", () => {
    expect(checkRestartDrain(delivered)).toMatchObject({
      pass: true,
      result: "inbox 150/150, effects 150, duplicate skips: 0, queue 0, DLQ 0",
    });
    expect(checkRestartDrain({ ...delivered, duplicates: 20 })).toMatchObject({
      pass: false,
      result: expect.stringContaining("duplicate skips: 20"),
    });
    expect(checkRestartDrain({ ...delivered, inbox: 149 }).pass).toBe(false);
    expect(checkRestartDrain({ ...delivered, effects: 151 }).pass).toBe(false);
    expect(checkRestartDrain({ ...delivered, dlqDepth: 1 }).pass).toBe(false);
  });

  it("sigkill: repeats are allowed, a second effect or a lost event is not", () => {
    const good = { ...delivered, duplicates: 20, relayResent: 20, kills: 2 };
    expect(checkSigkill(good).pass).toBe(true);
    expect(checkSigkill({ ...good, effects: 170 }).pass).toBe(false);
    expect(checkSigkill({ ...good, inbox: 140, effects: 140 }).pass).toBe(false);
  });

  it("rolling-restart: no loss, no duplicate, every exit 0, latency reported", () => {
    const good = { ...delivered, lost: 0, exits: [clean, clean, clean], stopMs: [40, 900, 120] };
    expect(checkRollingRestart(good)).toMatchObject({
      pass: true,
      result: expect.stringContaining("stop latency min/median/max 40/120/900 ms"),
    });
    expect(checkRollingRestart({ ...good, lost: 1 }).pass).toBe(false);
    expect(checkRollingRestart({ ...good, duplicates: 1 }).pass).toBe(false);
    expect(checkRollingRestart({ ...good, exits: [clean, { code: null, signal: "SIGTERM" }] }).pass).toBe(
      false,
    );
  });

  it("chaos: no loss and exactly-once effects, duplicates only shown", () => {
    const good = {
      ...delivered,
      duplicates: 31,
      lost: 0,
      kills: 6,
      postgresRestarts: 1,
      busOutages: 1,
      relayResent: 12,
    };
    expect(checkChaos(good).pass).toBe(true);
    expect(checkChaos({ ...good, lost: 2, inbox: 148, effects: 148 }).pass).toBe(false);
    expect(checkChaos({ ...good, effects: 151 }).pass).toBe(false);
  });

  it("renders the table in the source document's shape", () => {
    const table = renderTable([
      {
        scenario: "restart-drain",
        checks: [checkRestartDrain({ ...delivered, duplicates: 2 })],
        figures: {},
        durationMs: 1,
      },
    ]);
    expect(table.split("\n")).toEqual([
      "| check | result | verdict |",
      "|---|---|---|",
      "| restart and drain everything | inbox 150/150, effects 150, duplicate skips: 2, queue 0, DLQ 0 | **FAIL** |",
    ]);
  });
});
