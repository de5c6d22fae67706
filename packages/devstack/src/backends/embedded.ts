import { startLocalAws } from "../local-aws.js";
import type { LocalStack, StartStackOptions } from "../local-stack.js";
import { startEmbeddedPostgres } from "../postgres/embedded.js";
import { FaultClient } from "../sns/faults/client.js";
import { StatsClient } from "../stats/client.js";

async function stopAll(stoppers: Array<() => Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(stoppers.map((stop) => stop()));
  const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  if (errors.length > 0) throw new AggregateError(errors, "some stack services failed to stop");
}

/** Postgres, SQS and the SNS emulator, all in-process or child processes, no Docker. */
export async function startEmbeddedStack(options: StartStackOptions): Promise<LocalStack> {
  const [postgres, local] = await Promise.allSettled([
    startEmbeddedPostgres({ settings: options.postgresSettings }),
    startLocalAws(),
  ]);
  if (postgres.status === "rejected" || local.status === "rejected") {
    await stopAll([postgres, local].flatMap((r) => (r.status === "fulfilled" ? [r.value.stop] : [])));
    throw postgres.status === "rejected"
      ? postgres.reason
      : local.status === "rejected"
        ? local.reason
        : null;
  }
  const pg = postgres.value;
  const { aws, sns } = local.value;
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
    // SNS before SQS inside `local.value.stop`; Postgres alongside.
    stop: () => stopAll([local.value.stop, postgres.value.stop]),
  };
}
