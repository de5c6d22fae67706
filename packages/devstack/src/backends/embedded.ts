import { startLocalAws } from "../local-aws.js";
import type { LocalStack, StartStackOptions } from "../local-stack.js";
import { startMotoServer } from "../moto/moto-server.js";
import { startEmbeddedPostgres } from "../postgres/embedded.js";
import { CLAIM_CHECK_BUCKET, createClaimCheckBucket } from "../s3/claim-check-bucket.js";
import { FaultClient } from "../sns/faults/client.js";
import { StatsClient } from "../stats/client.js";

async function stopAll(stoppers: Array<() => Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(stoppers.map((stop) => stop()));
  const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  if (errors.length > 0) throw new AggregateError(errors, "some stack services failed to stop");
}

/** Postgres, SQS, the SNS emulator and S3 (moto), all in-process or child processes, no Docker. */
export async function startEmbeddedStack(options: StartStackOptions): Promise<LocalStack> {
  const [postgres, local, moto] = await Promise.allSettled([
    startEmbeddedPostgres({ settings: options.postgresSettings }),
    startLocalAws(),
    startMotoServer(),
  ]);
  const started = [postgres, local, moto];
  if (postgres.status === "rejected" || local.status === "rejected" || moto.status === "rejected") {
    await stopAll(started.flatMap((r) => (r.status === "fulfilled" ? [r.value.stop] : [])));
    throw started.find((r): r is PromiseRejectedResult => r.status === "rejected")?.reason;
  }
  const pg = postgres.value;
  const { sns } = local.value;
  const aws = { ...local.value.aws, s3Endpoint: moto.value.endpoint };
  try {
    await createClaimCheckBucket(aws);
  } catch (error) {
    await stopAll([local.value.stop, postgres.value.stop, moto.value.stop]);
    throw error;
  }
  return {
    backend: "embedded",
    postgres: {
      adminUrl: pg.adminUrl,
      dataDir: pg.dataDir,
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
    claimCheckBucket: CLAIM_CHECK_BUCKET,
    // SNS before SQS inside `local.value.stop`; Postgres and S3 alongside.
    stop: () => stopAll([local.value.stop, postgres.value.stop, moto.value.stop]),
  };
}
