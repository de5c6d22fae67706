import { migrateApiTables } from "@outbox/api";
import { migrateToLatest } from "@outbox/client";
import {
  awsEnvironment,
  bootstrapResources,
  type EquipmentStub,
  type LocalStack,
  startEquipmentStub,
  startStack,
} from "@outbox/devstack";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { createDatabase, EXIT_CRASH, EXIT_OK, migrateExampleTables } from "@outbox/shared";
import { onLauncherExit } from "./launcher-watch.js";

export interface RunStackOptions {
  /** Apply the outbox/inbox migrations, the photo service's and the demo's to the stack's database before printing. */
  readonly migrate: boolean;
}

// How often the stack checks that pnpm (or whatever launched it) is still there.
const LAUNCHER_POLL_MS = 500;
// Migrations on a fresh local database take a second; a minute means something is wrong.
const MIGRATION_STATEMENT_TIMEOUT_MS = 60_000;

async function migrateStackDatabase(url: string): Promise<number> {
  const handle = createDatabase({
    url,
    service: "stack-migrate",
    poolMax: 1,
    statementTimeoutMs: MIGRATION_STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs: MIGRATION_STATEMENT_TIMEOUT_MS,
  });
  try {
    // The demo's after the production list: production 0008 drops the demo's table.
    const applied = [
      ...(await migrateToLatest(handle.db)),
      ...(await migrateApiTables(handle.db)),
      ...(await migrateExampleTables(handle.db)),
    ];
    return applied.length;
  } finally {
    await handle.close(MIGRATION_STATEMENT_TIMEOUT_MS);
  }
}

/** `pnpm stack`: the local stack in the foreground, until a signal or the end of its launcher. */
export async function runStack(options: RunStackOptions): Promise<void> {
  let stack: LocalStack | undefined;
  let equipment: EquipmentStub | undefined;
  let stopping = false;
  async function shutdown(code: number): Promise<void> {
    if (stopping) return;
    stopping = true;
    console.error("stopping local stack…");
    try {
      await equipment?.close();
      await stack?.stop();
      process.exit(code);
    } catch (error) {
      console.error(error);
      process.exit(EXIT_CRASH);
    }
  }
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => shutdown(EXIT_OK));
  onLauncherExit(() => {
    console.error("the process that launched the stack has exited");
    void shutdown(EXIT_OK);
  }, LAUNCHER_POLL_MS);

  try {
    // `pnpm stack` is the embedded stack (fault injection, no Docker) unless STACK asks otherwise.
    stack = await startStack({ backend: process.env.STACK ? undefined : "embedded" });
    const migrated = options.migrate ? await migrateStackDatabase(stack.postgres.adminUrl) : undefined;
    // Raw delivery, as the CDK stack subscribes and the consumer reads by default (CONSUMER_DELIVERY).
    const demo = await bootstrapResources(stack.aws, { name: "demo", rawDelivery: true });
    equipment = await startEquipmentStub();
    const env: Record<string, string> = {
      DATABASE_URL: stack.postgres.adminUrl,
      ...awsEnvironment(stack.aws),
      RELAY_DEFAULT_TOPIC_ARN: demo.topicArn,
      CONSUMER_QUEUE_URL: demo.queueUrl,
      CONSUMER_DLQ_URL: demo.dlqUrl,
      // The S3 claim check's bucket, on the stack's S3 (AWS_ENDPOINT_URL_S3).
      ...(stack.claimCheckBucket === undefined
        ? {}
        : { CONSUMER_CLAIM_CHECK_BUCKET: stack.claimCheckBucket }),
      // The daemon has no default handlers: the demo's write example_effects (migrated above).
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      API_EQUIPMENT_URL: equipment.url,
    };
    for (const [name, value] of Object.entries(env)) console.log(`export ${name}=${value}`);
    console.error(`# backend: ${stack.backend}; pid ${process.pid}`);
    console.error(
      migrated === undefined
        ? "# database not migrated (--no-migrate): run `pnpm migrate --api --demo` before the daemons"
        : `# database migrated (${migrated} applied)`,
    );
    if (stack.faultControlUrl) console.error(`# fault control: ${stack.faultControlUrl}`);
    console.error("# local stack running; Ctrl-C to stop");
  } catch (error) {
    console.error(error);
    await shutdown(EXIT_CRASH);
  }
}
