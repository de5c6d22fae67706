import { randomBytes } from "node:crypto";
import { migrateApiTables } from "@outbox/api";
import { migrateToLatest } from "@outbox/client";
import {
  type BootstrappedResources,
  bootstrapResources,
  createDatabaseOn,
  type StackInfo,
} from "@outbox/devstack";
import { createDatabase, type DatabaseHandle, migrateExampleTables } from "@outbox/shared";

/** What one drill runs against: its own database and its own topic/queue/DLQ on a shared stack. */
export interface DrillEnvironment {
  readonly stack: StackInfo;
  readonly databaseUrl: string;
  readonly resources: BootstrappedResources;
  /** The drill's own connection, for producing events and observing tables. */
  readonly database: DatabaseHandle;
  close(): Promise<void>;
}

export interface DrillEnvironmentOptions {
  /** Prefix of the database and resource names, e.g. the scenario. */
  readonly label: string;
  readonly maxReceiveCount?: number;
  readonly visibilityTimeoutSeconds?: number;
  /** A Postgres server of the drill's own (the chaos drill restarts it); default: the stack's. */
  readonly postgresAdminUrl?: string;
  /** A FIFO topic and queue, so per-key order holds end to end and the inbox shows it. */
  readonly fifo?: boolean;
}

/** Creates a database (migrated) and a topic → queue (+ DLQ) subscription, both named after the label. */
export async function prepareDrillEnvironment(
  // The drill context's stack and watcher (a DrillContext is one).
  context: { readonly stack: StackInfo; readonly watch?: (environment: DrillEnvironment) => void },
  options: DrillEnvironmentOptions,
): Promise<DrillEnvironment> {
  const { stack } = context;
  const suffix = randomBytes(3).toString("hex");
  const name = `${options.label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${suffix}`;
  const databaseUrl = await createDatabaseOn(options.postgresAdminUrl ?? stack.postgres.adminUrl, name);
  const database = createDatabase({
    url: databaseUrl,
    service: "drill",
    poolMax: 5,
    statementTimeoutMs: 30_000,
    idleInTransactionTimeoutMs: 30_000,
  });
  await migrateToLatest(database.db);
  await migrateExampleTables(database.db);
  await migrateApiTables(database.db);
  const resources = await bootstrapResources(stack.aws, {
    name: name.replace(/_/g, "-"),
    rawDelivery: true,
    fifo: options.fifo === true,
    maxReceiveCount: options.maxReceiveCount ?? 10,
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 30,
  });
  const environment: DrillEnvironment = {
    stack,
    databaseUrl,
    resources,
    database,
    async close() {
      await database.close(5_000);
    },
  };
  context.watch?.(environment);
  return environment;
}
