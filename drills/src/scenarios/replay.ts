import { performance } from "node:perf_hooks";
import { DaemonFleet, startDaemonProcess, waitUntil } from "@outbox/test-kit/process";
import { sql } from "kysely";
import { checkReplay } from "../checks.js";
import { consumerEnv, DRILL_TOPIC, relayEnv, sumDrained } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import { countTables, queueDepths, waitForFullDelivery } from "../observe.js";
import { enqueueBacklog } from "../produce-events.js";
import type { ScenarioResult } from "../report.js";

/** Fast enough for the demo, paced all the same (`relay republish --rate`). */
const REPLAY_RATE = 500;

/**
 * A replay for a lost downstream: a backlog is published and processed, then `relay republish`
 * sends the whole range again (marked `replay=true`) with the consumer still running. Every replay
 * must reach the consumer as a duplicate its inbox catches, and no effect may happen twice.
 */
export async function runReplayDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const { scale, progress } = context;
  const started = performance.now();
  const environment = await prepareDrillEnvironment(context, { label: "replay" });
  const fleet = new DaemonFleet();
  try {
    // The database's clock, as `--from` takes it: every row published from now on is in the range.
    const { rows } = await sql<{ now: string }>`
      SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now
    `.execute(environment.database.db);
    const from = rows[0]?.now ?? "";
    await enqueueBacklog(environment.database, DRILL_TOPIC, scale.events);
    const relay = fleet.relay("relay", relayEnv(environment));
    const consumer = fleet.consumer("consumer", consumerEnv(environment, { DRILL_HANDLER_MS: "5" }));
    await waitForFullDelivery(environment, [relay, consumer]);
    const before = await countTables(environment);
    progress(`replay: ${before.published} published and processed; republishing them`);

    const republish = startDaemonProcess("apps/relay/src/main.ts", relayEnv(environment), {
      name: "relay republish",
      args: [
        "republish",
        "--from",
        from,
        "--topic",
        DRILL_TOPIC,
        "--rate",
        String(REPLAY_RATE),
        // The drill consumer's CONSUMER_INBOX_RETENTION_HOURS (its default): the range is minutes old.
        "--inbox-retention-hours",
        "336",
      ],
    });
    const exit = await republish.exited;
    // Its stdout is the one summary line (its logs go to stderr).
    const summary = republish.lines.find((line) => typeof line.run === "string");
    const replayed = typeof summary?.sent === "number" ? summary.sent : null;
    await waitUntil("the replays to be consumed", async () => (await queueDepths(environment)).queue === 0, {
      intervalMs: 250,
      timeoutMs: 60_000,
      alive: [relay, consumer],
    });
    await Promise.all([relay.stop("SIGTERM"), consumer.stop("SIGTERM")]);
    const [after, depths] = await Promise.all([countTables(environment), queueDepths(environment)]);
    const check = checkReplay({
      published: before.published,
      replayed,
      finished: summary?.finished === true && exit.code === 0,
      duplicates: sumDrained([consumer], "duplicates"),
      effectsBefore: before.effects,
      effectsAfter: after.effects,
      queueDepth: depths.queue,
    });
    progress(`replay: ${check.result}`);
    return [
      {
        scenario: "replay",
        checks: [check],
        figures: {
          published: before.published,
          replayed,
          duplicates: sumDrained([consumer], "duplicates"),
          effectsBefore: before.effects,
          effectsAfter: after.effects,
          republishExit: exit.code,
          queue: depths.queue,
          dlq: depths.dlq,
        },
        durationMs: Math.round(performance.now() - started),
      },
    ];
  } finally {
    await fleet.killAll();
    await environment.close();
  }
}
