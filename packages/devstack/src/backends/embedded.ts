import { FaultClient } from "../faults/client.js";
import { startEmbeddedPostgres } from "../postgres/embedded.js";
import { startSnsEmulator } from "../sns/server.js";
import { startEmbeddedSqs } from "../sqs/embedded.js";
import type { AwsEndpoints, LocalStack, StartStackOptions } from "../stack.js";
import { StatsClient } from "../stats/client.js";

const REGION = "us-east-1";
// LocalStack's account id, so ARNs look the same on both backends.
const ACCOUNT_ID = "000000000000";
const CREDENTIALS = { accessKeyId: "test", secretAccessKey: "test" };

async function stopAll(stoppers: Array<() => Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(stoppers.map((stop) => stop()));
  const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  if (errors.length > 0) throw new AggregateError(errors, "some stack services failed to stop");
}

/** Postgres, SQS and the SNS emulator, all in-process or child processes, no Docker. */
export async function startEmbeddedStack(options: StartStackOptions): Promise<LocalStack> {
  const [postgres, sqs] = await Promise.allSettled([
    startEmbeddedPostgres({ settings: options.postgresSettings }),
    startEmbeddedSqs({ region: REGION, accountId: ACCOUNT_ID }),
  ]);
  if (postgres.status === "rejected" || sqs.status === "rejected") {
    await stopAll([postgres, sqs].flatMap((r) => (r.status === "fulfilled" ? [r.value.stop] : [])));
    throw postgres.status === "rejected" ? postgres.reason : sqs.status === "rejected" ? sqs.reason : null;
  }
  let sns: Awaited<ReturnType<typeof startSnsEmulator>>;
  try {
    sns = await startSnsEmulator({
      sqsEndpoint: sqs.value.endpoint,
      region: REGION,
      accountId: ACCOUNT_ID,
      credentials: CREDENTIALS,
    });
  } catch (error) {
    await stopAll([postgres.value.stop, sqs.value.stop]);
    throw error;
  }
  const pg = postgres.value;
  const aws: AwsEndpoints = {
    region: REGION,
    snsEndpoint: sns.endpoint,
    sqsEndpoint: sqs.value.endpoint,
    credentials: CREDENTIALS,
  };
  return {
    backend: "embedded",
    postgres: {
      adminUrl: pg.adminUrl,
      get running() {
        return pg.running;
      },
      stopServer: (stopOptions) => pg.stopServer(stopOptions),
      startServer: () => pg.startServer(),
      restart: (restartOptions) => pg.restart(restartOptions),
    },
    aws,
    faultControlUrl: sns.faultControlUrl,
    statsUrl: sns.statsUrl,
    faults: new FaultClient(sns.faultControlUrl),
    stats: new StatsClient(sns.statsUrl),
    // SNS first: its fan-out writes into SQS.
    stop: async () => {
      await stopAll([sns.stop]);
      await stopAll([sqs.value.stop, postgres.value.stop]);
    },
  };
}
