import type { SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { enqueue, type NewEvent } from "@outbox/client";
import { OUTBOX_LOCK_SPACE, RELAY_ASLEEP_LOCK } from "@outbox/client/internal";
import { type BootstrappedResources, bootstrapResources } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import {
  type AwsClientOptions,
  awsClients,
  createMigratedTestDatabase,
  stack,
  uniqueName,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll } from "vitest";
import {
  createRelay,
  createSnsPublisher,
  type Relay,
  type RelayOptions,
  type RelaySummary,
} from "../src/index.js";

/** A fresh, migrated database of its own. */
export function migratedDatabase(label: string): Promise<{ url: string; handle: DatabaseHandle }> {
  return createMigratedTestDatabase(label, { service: "relay-test" });
}

/** Topic → queue with raw delivery, so SQS messages carry the SNS message attributes as they were sent. */
export function topicWithQueue(prefix: string, fifo = false): Promise<BootstrappedResources> {
  return bootstrapResources(stack().aws, { name: uniqueName(prefix), fifo, rawDelivery: true });
}

/** What a relay test file runs against; the fields are set once the file's beforeAll has run. */
export interface RelayTestBed {
  /** The database's URL, which the relay LISTENs on. */
  readonly url: string;
  readonly handle: DatabaseHandle;
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  /** The `orders` topic and a standard queue on it. */
  readonly standard: BootstrappedResources;
  /** The `ledger` topic (FIFO) and a FIFO queue on it. */
  readonly fifo: BootstrappedResources;
  /** Creates and starts a relay on the bed's database and topics: the file's defaults, then `options`. */
  start(options?: Partial<RelayOptions>): Relay;
  /** Drains one relay that `start` started. */
  stop(relay: Relay): Promise<RelaySummary>;
  /** Drains every relay `start` started and that is not stopped yet. */
  stopAll(): Promise<void>;
}

/**
 * Registers the file's beforeAll/afterAll: a migrated database `relay_<label>`, SDK clients (with
 * `aws` options), and both topics with their queues. afterAll drains the relays still running, then
 * closes everything.
 */
export function useRelayTestBed(
  label: string,
  { aws = {}, defaults = {} }: { aws?: AwsClientOptions; defaults?: Partial<RelayOptions> } = {},
): RelayTestBed {
  const running: Relay[] = [];
  const bed = {
    start(options: Partial<RelayOptions> = {}): Relay {
      const relay = createRelay({
        db: bed.handle.db,
        publisher: createSnsPublisher(bed.sns),
        listenUrl: bed.url,
        topicArns: { orders: bed.standard.topicArn, ledger: bed.fifo.topicArn },
        backoff: { baseMs: 50, maxMs: 200 },
        outageBackoffMaxMs: 200,
        ...defaults,
        ...options,
      });
      relay.start();
      running.push(relay);
      return relay;
    },
    stop(relay: Relay): Promise<RelaySummary> {
      const at = running.indexOf(relay);
      if (at >= 0) running.splice(at, 1);
      return relay.drain();
    },
    async stopAll(): Promise<void> {
      await Promise.all(running.splice(0).map((relay) => relay.drain()));
    },
  } as RelayTestBed;

  beforeAll(async () => {
    const { url, handle } = await migratedDatabase(`relay_${label}`);
    const { sns, sqs } = awsClients(aws);
    const [standard, fifo] = await Promise.all([
      topicWithQueue(`relay-${label}-std`),
      topicWithQueue(`relay-${label}-fifo`, true),
    ]);
    Object.assign(bed, { url, handle, sns, sqs, standard, fifo });
  });
  afterAll(async () => {
    await bed.stopAll();
    bed.sns.destroy();
    bed.sqs.destroy();
    await bed.handle.close(5_000);
  });
  return bed;
}

/** `count` events on `topic`, keyed round-robin over `keys` (unkeyed when 0), payload `{ n }`. */
export function events(topic: string, count: number, keys = 0, offset = 0): NewEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    topic,
    eventType: "test.happened",
    payload: { n: offset + i },
    orderingKey: keys > 0 ? `key-${(offset + i) % keys}` : null,
    headers: { traceparent: `00-${"0".repeat(31)}${(offset + i) % 10}-${"0".repeat(15)}1-01` },
  }));
}

/** Empties the outbox, for a test that counts rows from zero. */
export async function clearOutbox(handle: DatabaseHandle): Promise<void> {
  await sql`TRUNCATE outbox`.execute(handle.db);
}

export async function enqueueAll(handle: DatabaseHandle, list: readonly NewEvent[]): Promise<string[]> {
  const ids: string[] = [];
  for (let at = 0; at < list.length; at += 1_000)
    ids.push(...(await enqueue(handle.db, list.slice(at, at + 1_000))));
  return ids;
}

export async function countRows(
  handle: DatabaseHandle,
): Promise<{ unsent: number; published: number; dead: number }> {
  const row = await handle.db
    .selectFrom("outbox")
    .select((eb) => [
      eb.fn
        .countAll<string>()
        .filterWhere("published_at", "is", null)
        .filterWhere("dead_at", "is", null)
        .as("unsent"),
      eb.fn.countAll<string>().filterWhere("published_at", "is not", null).as("published"),
      eb.fn.countAll<string>().filterWhere("dead_at", "is not", null).as("dead"),
    ])
    .executeTakeFirstOrThrow();
  return { unsent: Number(row.unsent), published: Number(row.published), dead: Number(row.dead) };
}

/** Whether a relay's LISTEN session has announced its sleep: it claimed, found nothing due, and waits. */
export async function relayAsleep(handle: DatabaseHandle): Promise<boolean> {
  const { rows } = await sql<{ holders: string }>`
    SELECT count(*) AS holders FROM pg_locks
    -- Advisory locks are per database: the other test files' relays hold theirs on the same server.
    WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid = ${OUTBOX_LOCK_SPACE} AND objid = ${RELAY_ASLEEP_LOCK}
      AND objsubid = 2 AND granted
  `.execute(handle.db);
  return Number(rows[0]?.holders) > 0;
}
