import { awsEnvironment, statsClientFor } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import {
  commitOrderInversions,
  type DaemonProcess,
  hangLimit,
  isRunning,
  judgeKeyOrder,
  type RacingPlan,
  type Received,
  raceProducers,
  receiveAll,
  seededRandom,
  stack,
  startDaemonProcess,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, describe, expect, it, onTestFailed, vi } from "vitest";
import { countRows, useRelayTestBed } from "./harness.js";

// Its tests start up to 3 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 3 }) });

// Per-key order end to end (docs/relay.md, "Order per key"): producers racing on few keys with
// transactions held open for random times, two relay daemons, relays SIGKILLed mid-run and replaced.
// The guarantee checked: each key's events reach the queue in the order their transactions committed
// (which is their `seq` order), every committed event at least once and nothing else; a kill may re-send
// a key's latest event, never an older one behind a newer. A failure prints the seed; run it again
// with KEY_ORDER_SEED=<seed>.

const bed = useRelayTestBed("key_order_chaos");

/** 12 producers on 4 keys, one transaction in ten held open up to 0.55 s, one in ten rolled back. */
const RACE: RacingPlan = {
  producers: 12,
  keys: 4,
  transactionsEach: 20,
  heldShare: 0.1,
  heldMaxMs: 500,
  rollbackShare: 0.1,
};
const KILLS = 2;

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) if (isRunning(daemon)) daemon.child.kill("SIGKILL");
  await Promise.all(daemons.map((daemon) => daemon.exited));
});

/** Starts a relay daemon; resolves once it runs. */
async function startRelay(): Promise<DaemonProcess> {
  const daemon = startDaemonProcess(
    "apps/relay/src/main.ts",
    {
      DATABASE_URL: bed.url,
      LOG_LEVEL: "info",
      ...awsEnvironment(stack().aws),
      RELAY_TOPIC_ARNS: `ledger=${bed.fifo.topicArn}`,
      // Small batches and few lanes: a key's rows are spread over several batches and relays.
      RELAY_BATCH_SIZE: "8",
      RELAY_PUBLISH_CONCURRENCY: "2",
      RELAY_POLL_INTERVAL_MS: "100",
      // What a killed relay held comes back soon; the budget rules still hold.
      RELAY_LEASE_MS: "3000",
      RELAY_DRAIN_TIMEOUT_MS: "2000",
      DB_STATEMENT_TIMEOUT_MS: "500",
      DB_POOL_MAX: "4",
      AWS_REQUEST_TIMEOUT_MS: "1000",
      AWS_MAX_ATTEMPTS: "1",
    },
    { name: `relay-${daemons.length}` },
  );
  daemons.push(daemon);
  await daemon.waitForLog("started");
  return daemon;
}

describe("per-key order with racing producers, two relays and kills", () => {
  it("delivers each key in commit order, every committed event, nothing rolled back", async () => {
    const seed = Number(process.env.KEY_ORDER_SEED ?? Math.floor(Math.random() * 2 ** 31));
    onTestFailed(() => {
      console.error(`key-order chaos failed with seed ${seed}: KEY_ORDER_SEED=${seed} to repeat it`);
    });
    const random = seededRandom(seed);
    const killAfterMs = Array.from({ length: KILLS }, () => 200 + Math.floor(random() * 800));
    // Both relays claiming before the first event: the producers race them from the start.
    await Promise.all([startRelay(), startRelay()]);
    const producing = raceProducers(bed.handle, "ledger", RACE, random);
    const leasedAtKills: number[] = [];
    /** The running relays, the ones holding rows first (a relay's id carries its pid), and how many rows are held. */
    const holders = async () => {
      const { rows } = await sql<{ locked_by: string; n: string }>`
        SELECT locked_by, count(*) AS n FROM outbox WHERE locked_until > now() GROUP BY locked_by
      `.execute(bed.handle.db);
      const held = (daemon: DaemonProcess) =>
        Number(rows.find((row) => row.locked_by.includes(`:${daemon.child.pid}:`))?.n ?? 0);
      return daemons
        .filter(isRunning)
        .map((daemon) => ({ daemon, held: held(daemon) }))
        .toSorted((a, b) => b.held - a.held);
    };
    // At random moments of the run, SIGKILL a relay and start another in its place: the one holding
    // rows, once one does (up to a second's wait), so the kill lands mid-batch.
    const killing = (async () => {
      for (const after of killAfterMs) {
        await sleep(after);
        const holding = async () => ((await holders())[0]?.held ?? 0) > 0;
        for (let waited = 0; waited < 1_000 && !(await holding()); waited += 20) await sleep(20);
        const [victim] = await holders();
        leasedAtKills.push(victim?.held ?? 0);
        victim?.daemon.child.kill("SIGKILL");
        await victim?.daemon.exited;
        await startRelay();
      }
    })();
    const [{ committed, rolledBack, failed }] = await Promise.all([producing, killing]);

    const committedIds = committed.flatMap((trx) => trx.ids);
    await expect
      .poll(async () => (await countRows(bed.handle)).unsent, { timeout: 30_000, interval: 200 })
      .toBe(0);
    expect(await countRows(bed.handle)).toMatchObject({ published: committedIds.length, dead: 0 });

    const rows = await bed.handle.db.selectFrom("outbox").select(["id", "ordering_key", "seq"]).execute();
    const outbox = rows.map((row) => ({ id: row.id, orderingKey: row.ordering_key, seq: Number(row.seq) }));
    const byId = new Map(outbox.map((row) => [row.id, row]));

    // The bus's side: what the FIFO queue holds, in the order the topic took it.
    const received: Received[] = await receiveAll(bed.sqs, bed.fifo.queueUrl, committedIds.length);
    const arrived = received.map((message) => message.attributes.event_id ?? "");
    const order = judgeKeyOrder(outbox, arrived);
    const firstArrivals = new Set(arrived);
    const duplicates = arrived.length - firstArrivals.size;
    // Re-sends the bus took (a kill's chunk in flight): a FIFO topic drops them as duplicates, so the
    // queue may show none; counted at the emulator, when it keeps stats.
    const resent = (await statsClientFor(stack())?.topic(bed.fifo.topicArn))?.republished ?? "unknown";
    // A re-send after a kill repeats its key's latest event; a repeat behind a later event of its key
    // would be a step back in the key's order.
    const highest = new Map<string, number>();
    let stepsBack = 0;
    for (const id of arrived) {
      const row = byId.get(id);
      if (!row?.orderingKey) continue;
      if (row.seq < (highest.get(row.orderingKey) ?? Number.NEGATIVE_INFINITY)) stepsBack += 1;
      else highest.set(row.orderingKey, row.seq);
    }
    console.info(
      `key-order chaos (seed ${seed}): ${committed.length} transactions committed (${committedIds.length} events), ` +
        `${rolledBack.length} events rolled back, ${failed} transactions failed, ${daemons.length} relays (${KILLS} SIGKILLed, rows the killed relays held: ${leasedAtKills.join(", ")}), ` +
        `${resent} re-sent at the bus, ${arrived.length} messages, ${duplicates} duplicates, inversions ${order.outOfOrder}, ` +
        `overtaken ${order.overtaken}, steps back ${stepsBack}`,
    );
    expect(order).toMatchObject({ outOfOrder: 0, overtaken: 0 });
    expect(stepsBack).toBe(0);
    expect([...firstArrivals].toSorted()).toEqual(committedIds.toSorted());
    expect(rolledBack.filter((id) => firstArrivals.has(id))).toEqual([]);

    // The producers' side: an event never has a lower seq than one of its key whose transaction's
    // COMMIT was answered before this one's was sent.
    expect(commitOrderInversions(committed, new Map(outbox.map((row) => [row.id, row.seq])))).toBe(0);

    // The kills happened while the run was on: the last relay is not the first two.
    expect(daemons.filter((daemon) => daemon.child.signalCode === "SIGKILL")).toHaveLength(KILLS);
  });
});
