import {
  checkChaos,
  checkClaimCheck,
  checkConsumerSigterm,
  checkDeadline,
  checkHttpSigkill,
  checkHttpSigterm,
  checkKeyOrder,
  checkPhotoChain,
  checkRelaySigterm,
  checkReplay,
  checkRestartDrain,
  checkRollingRestart,
  checkSigkill,
  checkSlowDependency,
  checkTerminationRace,
  formatMs,
  formatSeconds,
  type HttpOutcome,
  renderTable,
} from "@outbox/drills";
import { commitOrderInversions } from "@outbox/test-kit";
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

describe("termination-race checker", () => {
  const dropping = { preStopMs: 0, propagationMs: 1_000, predicted: 20, measured: 19, sent: 400 };
  const covered = { preStopMs: 1_000, propagationMs: 1_000, predicted: 0, measured: 0, sent: 400 };

  it("passes when prediction and measurement agree on which settings drop nothing, and says how far they differ", () => {
    expect(checkTerminationRace({ runs: [dropping, covered] })).toEqual({
      row: "terminationRace",
      check:
        "termination race: 2 api replicas behind a round-robin proxy that drops one 1000 ms after its stop begins",
      result:
        "preStop 0 ms: predicted 20, measured 19 of 400 (−1); preStop 1000 ms: predicted 0, measured 0 of 400 (±0)",
      pass: true,
    });
  });

  it("fails when reality drops where the model says nothing drops, or the reverse", () => {
    expect(checkTerminationRace({ runs: [dropping, { ...covered, measured: 3 }] }).pass).toBe(false);
    expect(checkTerminationRace({ runs: [{ ...dropping, measured: 0 }, covered] }).pass).toBe(false);
  });

  it("fails without a setting that drops and one that does not", () => {
    expect(checkTerminationRace({ runs: [covered, covered] }).pass).toBe(false);
    expect(checkTerminationRace({ runs: [dropping] }).pass).toBe(false);
    expect(checkTerminationRace({ runs: [] })).toMatchObject({ result: "no runs", pass: false });
  });
});

describe("photo service checkers", () => {
  const term = {
    inFlight: 8,
    holdMs: 3_000,
    outcomes: Array<HttpOutcome>(8).fill(201),
    committedPhotos: 8,
    committedEvents: 8,
    exit: clean,
    shutdown: { clean: true, cut: 0 },
  };

  it("http-sigterm: all 8 answer 201 and commit, clean, exit 0", () => {
    expect(checkHttpSigterm(term)).toMatchObject({
      pass: true,
      result: "8/8 answered 201 (8× 201); clean=true, cut=0; committed 8 photos + 8 outbox events; exit 0",
    });
    expect(
      checkHttpSigterm({ ...term, outcomes: [...Array<HttpOutcome>(7).fill(201), "cut"] }),
    ).toMatchObject({
      pass: false,
      result: expect.stringContaining("7/8 answered 201 (7× 201, 1× cut)"),
    });
    expect(checkHttpSigterm({ ...term, outcomes: [...Array<HttpOutcome>(7).fill(201), 503] }).pass).toBe(
      false,
    );
    expect(checkHttpSigterm({ ...term, shutdown: { clean: false, cut: 2 } }).pass).toBe(false);
    expect(checkHttpSigterm({ ...term, shutdown: null }).pass).toBe(false);
    expect(checkHttpSigterm({ ...term, committedEvents: 7 }).pass).toBe(false);
    expect(checkHttpSigterm({ ...term, committedPhotos: 0 }).pass).toBe(false);
    expect(checkHttpSigterm({ ...term, exit: { code: 1, signal: null } }).pass).toBe(false);
    expect(
      checkHttpSigterm({ ...term, inFlight: 0, outcomes: [], committedPhotos: 0, committedEvents: 0 }).pass,
    ).toBe(false);
  });

  it("http-sigkill: every request cut, nothing committed", () => {
    const kill = {
      ...term,
      outcomes: Array<HttpOutcome>(8).fill("cut"),
      committedPhotos: 0,
      committedEvents: 0,
      exit: killed,
    };
    expect(checkHttpSigkill(kill)).toMatchObject({ pass: true, result: expect.stringContaining("8/8 cut") });
    expect(checkHttpSigkill({ ...kill, outcomes: [...Array<HttpOutcome>(7).fill("cut"), 201] }).pass).toBe(
      false,
    );
    expect(checkHttpSigkill({ ...kill, committedPhotos: 1 }).pass).toBe(false);
    expect(checkHttpSigkill({ ...kill, exit: clean }).pass).toBe(false);
  });

  it("slow-dependency: 201 after the client's timeout, before the stub's, pending, then linked once", () => {
    const slow = {
      stubHangMs: 20_000,
      equipmentTimeoutMs: 10_000,
      status: 201 as HttpOutcome,
      gearLink: "pending",
      elapsedMs: 10_112,
      stubReceivedMs: 9_999,
      linkedAfterRecovery: true,
      linksAtStub: 1,
    };
    expect(checkSlowDependency(slow)).toMatchObject({
      pass: true,
      result:
        "201 in 10.1 s, link pending; stub received 9 999 ms; after recovery linked by reconciliation (1 link at the stub)",
    });
    // Waited for the stub: the client's timeout did not bound the call.
    expect(checkSlowDependency({ ...slow, elapsedMs: 20_050 }).pass).toBe(false);
    // Answered before the client could have timed out: the call was never really made.
    expect(checkSlowDependency({ ...slow, elapsedMs: 120 }).pass).toBe(false);
    expect(checkSlowDependency({ ...slow, status: 504 }).pass).toBe(false);
    expect(checkSlowDependency({ ...slow, gearLink: "linked" }).pass).toBe(false);
    expect(checkSlowDependency({ ...slow, stubReceivedMs: null }).pass).toBe(false);
    expect(checkSlowDependency({ ...slow, stubReceivedMs: 25_000 }).pass).toBe(false);
    expect(checkSlowDependency({ ...slow, linkedAfterRecovery: false }).pass).toBe(false);
    expect(checkSlowDependency({ ...slow, linksAtStub: 0 }).pass).toBe(false);
  });

  it("deadline: answered with the caller's 3 s, the stub got 3 000 minus the time upstream", () => {
    const deadline = {
      headerMs: 3_000,
      equipmentTimeoutMs: 10_000,
      status: 201 as HttpOutcome,
      gearLink: "pending",
      elapsedMs: 3_080,
      stubReceivedMs: 2_981,
      upstreamMs: 40,
    };
    expect(checkDeadline(deadline)).toMatchObject({
      pass: true,
      result: "201 in 3.1 s (not 10.0 s), link pending; stub received 2 981 ms (3 000 ms − 19 ms upstream)",
    });
    // The fixed hierarchy only: the 10 s client timeout fired, not the caller's deadline.
    expect(checkDeadline({ ...deadline, elapsedMs: 10_100 }).pass).toBe(false);
    // The document's trap: the stub recorded the client's own 10 s, not the caller's remaining time.
    expect(checkDeadline({ ...deadline, stubReceivedMs: 9_999 }).pass).toBe(false);
    // More time spent than the drill saw pass: the value was not derived from the header.
    expect(checkDeadline({ ...deadline, stubReceivedMs: 2_500 }).pass).toBe(false);
    expect(checkDeadline({ ...deadline, stubReceivedMs: null }).pass).toBe(false);
    expect(checkDeadline({ ...deadline, status: 504 }).pass).toBe(false);
    expect(checkDeadline({ ...deadline, elapsedMs: 40 }).pass).toBe(false);
  });

  it("photo-chain: every post's event applied exactly once, none lost, no duplicate skips", () => {
    const chain = {
      posts: 200,
      posted: 200,
      events: 200,
      feed: 200,
      lost: 0,
      duplicates: 0,
      restarts: 6,
      exits: [clean, clean],
    };
    expect(checkPhotoChain(chain).pass).toBe(true);
    expect(checkPhotoChain({ ...chain, posted: 199 }).pass).toBe(false);
    expect(checkPhotoChain({ ...chain, feed: 199, lost: 1 }).pass).toBe(false);
    expect(checkPhotoChain({ ...chain, duplicates: 3 }).pass).toBe(false);
    expect(checkPhotoChain({ ...chain, exits: [clean, { code: 1, signal: null }] }).pass).toBe(false);
    expect(checkPhotoChain({ ...chain, posts: 0, posted: 0, events: 0, feed: 0 }).pass).toBe(false);
  });

  it("prints figures the way the document does", () => {
    expect(formatMs(2_981)).toBe("2 981 ms");
    expect(formatMs(19)).toBe("19 ms");
    expect(formatSeconds(10_112)).toBe("10.1 s");
  });

  it("claim-check: the large payload handled once byte for byte, the deleted object's message in the DLQ naming it", () => {
    const object = "s3://outbox-claim-check/drill/abc";
    const good = {
      payloadBytes: 5 * 1024 * 1024,
      messageBytes: 173,
      inbox: 1,
      effects: 1,
      exactBytes: true,
      deletedObjectReason: `claimed_payload_missing: no object at ${object} (NoSuchKey)`,
      deletedObject: object,
      exits: [clean, clean],
    };
    expect(checkClaimCheck(good)).toMatchObject({
      pass: true,
      check: "claim check: a 5.0 MiB payload through S3, and one whose object was deleted",
      result: `SQS body 173 bytes (the pointer, with ExtendedPayloadSize); handled 1× (effects 1), byte for byte; deleted object → DLQ: claimed_payload_missing: no object at ${object} (NoSuchKey); exit 0`,
    });
    // Not offloaded: the payload itself travelled (or was too small to need it).
    expect(checkClaimCheck({ ...good, messageBytes: 300_000 }).pass).toBe(false);
    expect(checkClaimCheck({ ...good, payloadBytes: 1_000 }).pass).toBe(false);
    // Not once, or not the same bytes.
    expect(checkClaimCheck({ ...good, inbox: 0, effects: 0 }).pass).toBe(false);
    expect(checkClaimCheck({ ...good, effects: 2 }).pass).toBe(false);
    expect(checkClaimCheck({ ...good, exactBytes: false }).pass).toBe(false);
    // The deleted object's message skipped, or quarantined for another reason.
    expect(checkClaimCheck({ ...good, deletedObjectReason: null }).pass).toBe(false);
    expect(checkClaimCheck({ ...good, deletedObjectReason: "rejected_by_handler: x" }).pass).toBe(false);
    expect(checkClaimCheck({ ...good, exits: [clean, killed] }).pass).toBe(false);
  });
});

describe("replay checker", () => {
  const good = {
    published: 150,
    replayed: 150,
    finished: true,
    duplicates: 150,
    effectsBefore: 150,
    effectsAfter: 150,
    queueDepth: 0,
  };

  it("passes when every replay is a duplicate and no effect happens twice, and fails every other way", () => {
    expect(checkReplay(good)).toMatchObject({ pass: true });
    expect(checkReplay(good).result).toContain("consumer duplicates 150 = replayed");
    expect(checkReplay({ ...good, effectsAfter: 151 }).pass).toBe(false);
    expect(checkReplay({ ...good, duplicates: 149 }).pass).toBe(false);
    expect(checkReplay({ ...good, replayed: 140, duplicates: 140 }).pass).toBe(false);
    expect(checkReplay({ ...good, finished: false }).pass).toBe(false);
    expect(checkReplay({ ...good, queueDepth: 1 }).pass).toBe(false);
    expect(checkReplay({ ...good, effectsBefore: 149, effectsAfter: 149 }).pass).toBe(false);
    expect(checkReplay({ ...good, replayed: null })).toMatchObject({ pass: false });
  });

  it("racing-producers: no inversion anywhere, every committed event once, with held transactions and a kill", () => {
    const good = {
      producers: 32,
      keys: 8,
      held: 60,
      kills: 1,
      expected: 1_200,
      rolledBack: 60,
      outOfOrder: 0,
      overtaken: 0,
      commitOrderInversions: 0,
      inbox: 1_200,
      effects: 1_200,
      lost: 0,
      dead: 0,
      duplicates: 3,
    };
    expect(checkKeyOrder(good)).toMatchObject({ pass: true });
    expect(checkKeyOrder(good).result).toContain("per-key inversions 0");
    expect(checkKeyOrder({ ...good, outOfOrder: 1 }).pass).toBe(false);
    expect(checkKeyOrder({ ...good, commitOrderInversions: 2 })).toMatchObject({ pass: false });
    expect(checkKeyOrder({ ...good, commitOrderInversions: 2 }).result).toContain("per-key inversions 2");
    expect(checkKeyOrder({ ...good, overtaken: 1 }).pass).toBe(false);
    expect(checkKeyOrder({ ...good, effects: 1_201 }).pass).toBe(false);
    expect(checkKeyOrder({ ...good, inbox: 1_199, lost: 1 }).pass).toBe(false);
    expect(checkKeyOrder({ ...good, dead: 1 }).pass).toBe(false);
    // A run that raced nothing, or killed nothing, shows nothing.
    expect(checkKeyOrder({ ...good, held: 0 }).pass).toBe(false);
    expect(checkKeyOrder({ ...good, kills: 0 }).pass).toBe(false);
  });

  it("commit order: only a commit answered before another was sent orders them", () => {
    const seqOf = new Map([
      ["a1", 1],
      ["a2", 5],
      ["b1", 3],
      ["c1", 4],
    ]);
    // A answered (clock 1) before B sent (2): B's seq 3 is below A's 5, an inversion.
    const a = { ids: ["a1", "a2"], keys: ["k", "k"], commitSent: 0, commitAnswered: 1 };
    const b = { ids: ["b1"], keys: ["k"], commitSent: 2, commitAnswered: 3 };
    expect(commitOrderInversions([a, b], seqOf)).toBe(1);
    // In flight together (B sent before A answered): either order is right.
    expect(commitOrderInversions([a, { ...b, commitSent: 0.5 }], seqOf)).toBe(0);
    // Another key, or no key, is not compared.
    expect(commitOrderInversions([a, { ...b, keys: ["other"] }], seqOf)).toBe(0);
    expect(commitOrderInversions([a, { ...b, keys: [null] }], seqOf)).toBe(0);
    expect(
      commitOrderInversions([a, { ids: ["c1"], keys: ["k"], commitSent: 4, commitAnswered: 5 }], seqOf),
    ).toBe(1);
  });
});
