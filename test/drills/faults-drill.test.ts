import {
  checkFault,
  drillContext,
  FAULTS,
  type FaultObservation,
  runFaultsDrill,
  testScale,
} from "@outbox/drills";
import { judgeKeyOrder } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

const clean = { code: 0, signal: null };

// The faults drill's row passes only on the run its expectations describe, and fails every way
// of breaking one of them: a row that cannot fail proves nothing.
describe("faults drill checker", () => {
  const good: FaultObservation = {
    fault: "relay's idle Postgres backends frozen (SIGSTOP) 8.0 s",
    notInjected: null,
    noticeMs: 1_200,
    recoverMs: 2_300,
    recoverFrom: "fault start",
    stops: [{ daemon: "relay", stopMs: 3_100, budgetMs: 5_000, exit: clean }],
    expected: 400,
    inbox: 400,
    effects: 400,
    lost: 0,
    dead: 0,
    outOfOrder: 0,
    overtaken: 0,
  };

  it("passes a fault noticed, recovered from, stopped inside its budget, with nothing lost, once, in order", () => {
    expect(checkFault(good)).toEqual({
      row: "fault",
      check: good.fault,
      result:
        "noticed 1.2 s · recovered 2.3 s after the fault start · SIGTERM: relay 3.1 s of 5.0 s, exit 0 · lost 0 · effects 400/400 (exactly once: true) · per-key order held",
      pass: true,
    });
  });

  it.each<[string, Partial<FaultObservation>, string]>([
    ["never noticed", { noticeMs: null }, "never noticed"],
    ["never recovered", { recoverMs: null }, "never recovered (from the fault start)"],
    [
      "a stop over its budget",
      { stops: [{ daemon: "relay", stopMs: 7_800, budgetMs: 5_000, exit: clean }] },
      "relay 7.8 s of 5.0 s",
    ],
    [
      "a stop ended by SIGKILL",
      {
        stops: [{ daemon: "relay", stopMs: 4_000, budgetMs: 5_000, exit: { code: null, signal: "SIGKILL" } }],
      },
      "killed by SIGKILL",
    ],
    ["no stop during the fault", { stops: [] }, "SIGTERM: no stop"],
    // A post answered 201 without its event: lost, though every event present arrived once.
    ["an event lost", { lost: 1 }, "lost 1"],
    ["a dead event", { dead: 2 }, "(2 dead)"],
    ["an effect missing", { effects: 399 }, "effects 399/400 (exactly once: false)"],
    ["an event out of order", { outOfOrder: 1 }, "per-key order broken (1 out of order, 0 overtaken)"],
    ["an event overtaken", { overtaken: 3 }, "per-key order broken (0 out of order, 3 overtaken)"],
    [
      "a fault the emulator did not take",
      { notInjected: "the SNS emulator dropped okBody" },
      "fault not injected: the SNS emulator dropped okBody",
    ],
  ])("fails %s", (_, broken, shown) => {
    const check = checkFault({ ...good, ...broken });
    expect(check.pass).toBe(false);
    expect(check.result).toContain(shown);
  });
});

describe("per-key order at the bus", () => {
  const events = [
    { id: "a1", orderingKey: "a", seq: 1 },
    { id: "b2", orderingKey: "b", seq: 2 },
    { id: "a3", orderingKey: "a", seq: 3 },
    { id: "n4", orderingKey: null, seq: 4 },
    { id: "a5", orderingKey: "a", seq: 5 },
  ];

  it("holds when each key's events arrive in seq order, whatever the keys in between and repeats", () => {
    expect(judgeKeyOrder(events, ["a1", "n4", "b2", "a3", "a1", "a5"])).toEqual({
      outOfOrder: 0,
      overtaken: 0,
      examples: [],
    });
  });

  it("counts an event that arrives after a later one of its key", () => {
    expect(judgeKeyOrder(events, ["a1", "a5", "a3", "b2", "n4"])).toMatchObject({
      outOfOrder: 1,
      overtaken: 0,
      examples: [{ key: "a", seq: 3, after: 5 }],
    });
  });

  it("counts an event that never arrives behind a later one of its key as overtaken", () => {
    expect(judgeKeyOrder(events, ["a1", "b2", "a5"])).toMatchObject({ outOfOrder: 0, overtaken: 1 });
    // Missing at the end of its key is not an overtaking: nothing later of the key got through.
    expect(judgeKeyOrder(events, ["a1", "b2", "a3"])).toMatchObject({ outOfOrder: 0, overtaken: 0 });
  });
});

describe("faults drill (one row on the real stack)", () => {
  const drillStack = useDrillStack();

  it("Postgres stopped and started under traffic: noticed, recovered, stops in budget, lost 0, once, in order", async () => {
    const lines: string[] = [];
    const postgresStopped = FAULTS.filter((fault) => fault.name === "postgres-stopped");
    const [result] = await runFaultsDrill(
      drillContext(drillStack(), { scale: testScale, seed: 3, progress: (line) => lines.push(line) }),
      postgresStopped,
    );
    expect(result?.checks).toHaveLength(1);
    expect(result?.checks[0], `${result?.checks[0]?.result}\n${lines.join("\n")}`).toMatchObject({
      pass: true,
    });
  }, 180_000);
});
