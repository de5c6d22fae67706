import { awsEnvironment } from "@outbox/devstack";
import { parseCommandLine, wholeNumberOption } from "@outbox/shared/command-line";
import { DaemonFleet, randomSeed, startDaemonProcess } from "@outbox/test-kit/process";
import { consumerEnv, DRILL_TOPIC, relayEnv } from "../daemons.js";
import { DEMO_DRILLS } from "../demo.js";
import { fullScale } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import { enqueueBacklog } from "../produce-events.js";
import { runDrillSession } from "./drill-session.js";

const usage = `usage: pnpm start [--events N] [--rate N] [--duration S] [--seed N] [--keep-running]

The demo: an embedded stack (Postgres, SQS, SNS emulator, equipment stub), the real photo service,
relay and consumer daemons as separate processes, the source document's stop drills (HTTP and
daemons), the SIGKILL comparisons, a rolling restart under traffic, the slow dependency and the
deadline propagation; prints the acceptance table and exits, leaving nothing behind.

  --events N      events in the stop drills' backlog (default ${fullScale.events})
  --rate N        producer rate during the rolling restart, events/s (default 100)
  --duration S    length of the rolling restart in seconds (default 20)
  --seed N        seed of the random restart moments
  --keep-running  afterwards, leave the stack and both daemons up to explore, until Ctrl-C`;

const { values } = parseCommandLine(usage, {
  events: { type: "string" },
  rate: { type: "string" },
  duration: { type: "string" },
  seed: { type: "string" },
  "keep-running": { type: "boolean", default: false },
});

const events = wholeNumberOption(usage, "events", values.events, fullScale.events);
const scale = {
  events,
  // The document's batch: 100 of 150. With fewer events the first batch is two thirds of them.
  batchSize: events >= 150 ? Math.min(100, events - 1) : Math.max(1, Math.floor((events * 2) / 3)),
  eventsPerSecond: wholeNumberOption(usage, "rate", values.rate, 100),
  seriesDurationMs: wholeNumberOption(usage, "duration", values.duration, 20) * 1_000,
  restarts: 4,
  racingTransactions: fullScale.racingTransactions,
  outageMs: fullScale.outageMs,
};
const seed = wholeNumberOption(usage, "seed", values.seed, randomSeed(), 0);

process.exit(
  await runDrillSession({
    drills: DEMO_DRILLS,
    label: "start",
    scale,
    seed,
    ...(values["keep-running"] === true
      ? {
          async keepRunning(stack, context) {
            const environment = await prepareDrillEnvironment(context, { label: "explore" });
            const fleet = new DaemonFleet();
            const relay = fleet.relay("relay", relayEnv(environment));
            const consumer = fleet.consumer("consumer", consumerEnv(environment, { DRILL_HANDLER_MS: "5" }));
            const [relayPort, consumerPort] = await Promise.all(
              [relay, consumer].map(async (daemon) => Number((await daemon.waitForLog("started")).opsPort)),
            );
            await enqueueBacklog(environment.database, DRILL_TOPIC, 10);
            const { aws } = stack;
            // The operator console on the same database and queues (`pnpm console`, docs/console.md).
            const operatorConsole = startDaemonProcess(
              "apps/console/src/main.ts",
              {
                ...awsEnvironment(aws),
                DATABASE_URL: environment.databaseUrl,
                CONSUMER_QUEUE_URL: environment.resources.queueUrl,
                CONSUMER_DLQ_URL: environment.resources.dlqUrl,
                CONSOLE_PORT: "0",
              },
              { name: "console" },
            );
            const consoleUrl = String(
              (await operatorConsole.waitForLog("console listening", {}, 60_000)).url,
            );
            process.stderr.write(
              [
                "",
                "The stack and both daemons keep running. To explore:",
                `  export DATABASE_URL=${environment.databaseUrl}`,
                `  export AWS_ENDPOINT_URL_SNS=${aws.snsEndpoint} AWS_ENDPOINT_URL_SQS=${aws.sqsEndpoint}`,
                `  export AWS_REGION=${aws.region} AWS_ACCESS_KEY_ID=${aws.credentials.accessKeyId} AWS_SECRET_ACCESS_KEY=${aws.credentials.secretAccessKey}`,
                `  topic ${environment.resources.topicArn} (logical name "${DRILL_TOPIC}")`,
                `  queue ${environment.resources.queueUrl}, DLQ ${environment.resources.dlqUrl}`,
                `  relay    http://127.0.0.1:${relayPort}/metrics  (/livez, /readyz)`,
                `  consumer http://127.0.0.1:${consumerPort}/metrics`,
                `  console  ${consoleUrl}  (the operator console: backlog, dead rows, DLQ; docs/console.md)`,
                `  psql "$DATABASE_URL" -c "select count(*) from example_effects"`,
                `  pnpm --filter @outbox/relay exec tsx --conditions=development src/main.ts status`,
                "",
              ].join("\n"),
            );
          },
        }
      : {}),
  }),
);
