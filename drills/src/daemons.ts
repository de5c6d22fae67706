import { awsEnvironment } from "@outbox/devstack";
import { SLOW_EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import type { DaemonProcess } from "@outbox/test-kit/process";
import type { DrillEnvironment } from "./drill-environment.js";

/** The logical topic name the drills write to; the relay maps it to the drill's topic ARN. */
export const DRILL_TOPIC = "drill";

/** What both daemons' task definitions share: the database, the AWS endpoints, the log level. */
function commonEnv(environment: DrillEnvironment): Record<string, string> {
  return {
    DATABASE_URL: environment.databaseUrl,
    LOG_LEVEL: "info",
    ...awsEnvironment(environment.stack.aws),
  };
}

/** The relay's environment as an ECS task definition would set it, pointed at the drill's stack. */
export function relayEnv(
  environment: DrillEnvironment,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    ...commonEnv(environment),
    RELAY_TOPIC_ARNS: `${DRILL_TOPIC}=${environment.resources.topicArn}`,
    ...overrides,
  };
}

/**
 * The consumer's environment. The handlers are the example effect behind a short "work" delay
 * (@outbox/example-handlers' slow-example-handlers.ts), loaded the way a user loads their own module.
 */
export function consumerEnv(
  environment: DrillEnvironment,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    ...commonEnv(environment),
    CONSUMER_QUEUE_URL: environment.resources.queueUrl,
    CONSUMER_DLQ_URL: environment.resources.dlqUrl,
    CONSUMER_HANDLERS_MODULE: SLOW_EXAMPLE_HANDLERS_MODULE,
    DRILL_HANDLER_MS: "200",
    ...overrides,
  };
}

/**
 * The photo service's environment, pointed at the drill's database and an equipment service (the
 * devstack's stub). It listens on a free port (read it with `apiPort`) and writes `photo.posted` to
 * the drill's topic, so the drill's relay and consumer carry it on.
 */
export function apiEnv(
  environment: Pick<DrillEnvironment, "databaseUrl">,
  equipmentUrl: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: environment.databaseUrl,
    LOG_LEVEL: "info",
    API_HOST: "127.0.0.1",
    API_PORT: "0",
    API_EQUIPMENT_URL: equipmentUrl,
    API_PHOTO_TOPIC: DRILL_TOPIC,
    ...overrides,
  };
}

/** Sum of a numeric field over the `drained` lines of every run of a daemon. */
export function sumDrained(runs: readonly DaemonProcess[], field: string): number {
  return runs
    .flatMap((run) => run.lines.filter((line) => line.msg === "drained"))
    .reduce((sum, line) => sum + (typeof line[field] === "number" ? (line[field] as number) : 0), 0);
}

export function drainedLine(run: DaemonProcess): Record<string, unknown> | undefined {
  return run.lines.find((line) => line.msg === "drained");
}
