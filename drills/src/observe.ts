import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { sqsClient } from "@outbox/devstack";
import type { DaemonProcess, KeyedEvent } from "@outbox/test-kit/process";
import { waitUntil } from "@outbox/test-kit/process";
import { sql } from "kysely";
import type { DeliveryObservation } from "./checks.js";
import { sumDrained } from "./daemons.js";
import type { DrillEnvironment } from "./drill-environment.js";

export interface TableCounts {
  /** Every event ever committed to the outbox: what must arrive. */
  readonly enqueued: number;
  readonly published: number;
  /** Unpublished and not dead. */
  readonly unsent: number;
  readonly dead: number;
  /** Distinct events in the inbox. */
  readonly inbox: number;
  /** Rows of the example handler's effect table. */
  readonly effects: number;
  /** Outbox events with no inbox row. */
  readonly lost: number;
}

/** The database's view of a drill: the source of truth for lost and exactly-once. */
export async function countTables(environment: DrillEnvironment): Promise<TableCounts> {
  const { rows } = await sql<{
    enqueued: string;
    published: string;
    unsent: string;
    dead: string;
    inbox: string;
    effects: string;
    lost: string;
  }>`
    SELECT
      (SELECT count(*) FROM outbox) AS enqueued,
      (SELECT count(*) FROM outbox WHERE published_at IS NOT NULL) AS published,
      (SELECT count(*) FROM outbox WHERE published_at IS NULL AND dead_at IS NULL) AS unsent,
      (SELECT count(*) FROM outbox WHERE dead_at IS NOT NULL) AS dead,
      (SELECT count(DISTINCT event_id) FROM inbox) AS inbox,
      (SELECT count(*) FROM example_effects) AS effects,
      (SELECT count(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM inbox i WHERE i.event_id = o.id)) AS lost
  `.execute(environment.database.db);
  const row = rows[0];
  if (!row) throw new Error("count query returned no row");
  return {
    enqueued: Number(row.enqueued),
    published: Number(row.published),
    unsent: Number(row.unsent),
    dead: Number(row.dead),
    inbox: Number(row.inbox),
    effects: Number(row.effects),
    lost: Number(row.lost),
  };
}

export interface QueueDepths {
  /** Visible plus in flight (received, not deleted) plus delayed. */
  readonly queue: number;
  readonly inFlight: number;
  readonly dlq: number;
}

async function depth(
  environment: DrillEnvironment,
  queueUrl: string,
): Promise<{ total: number; inFlight: number }> {
  const sqs = sqsClient(environment.stack.aws);
  try {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: [
          "ApproximateNumberOfMessages",
          "ApproximateNumberOfMessagesNotVisible",
          "ApproximateNumberOfMessagesDelayed",
        ],
      }),
    );
    const inFlight = Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
    const total =
      Number(Attributes.ApproximateNumberOfMessages ?? 0) +
      inFlight +
      Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0);
    return { total, inFlight };
  } finally {
    sqs.destroy();
  }
}

export async function queueDepths(environment: DrillEnvironment): Promise<QueueDepths> {
  const [queue, dlq] = await Promise.all([
    depth(environment, environment.resources.queueUrl),
    depth(environment, environment.resources.dlqUrl),
  ]);
  return { queue: queue.total, inFlight: queue.inFlight, dlq: dlq.total };
}

/**
 * Waits, with the daemons running, until every committed event is in the inbox and the queue is
 * empty: the end state every drill drains to.
 */
export async function waitForFullDelivery(
  environment: DrillEnvironment,
  alive: readonly DaemonProcess[],
  timeoutMs = 120_000,
): Promise<void> {
  await waitUntil(
    "every event to reach the inbox and the queue to empty",
    async () => {
      const counts = await countTables(environment);
      return counts.lost === 0 && counts.unsent === 0 && (await queueDepths(environment)).queue === 0;
    },
    { intervalMs: 250, timeoutMs, alive },
  );
}

export interface DeliveryFigures {
  readonly counts: TableCounts;
  readonly depths: QueueDepths;
  /** What the end-of-drill checkers read. */
  readonly delivery: DeliveryObservation;
}

/** Tables, queues and the duplicates every consumer run reported, once the daemons have stopped. */
export async function observeDelivery(
  environment: DrillEnvironment,
  consumerRuns: readonly DaemonProcess[],
): Promise<DeliveryFigures> {
  const [counts, depths] = await Promise.all([countTables(environment), queueDepths(environment)]);
  return {
    counts,
    depths,
    delivery: {
      expected: counts.enqueued,
      inbox: counts.inbox,
      effects: counts.effects,
      duplicates: sumDrained(consumerRuns, "duplicates"),
      queueDepth: depths.queue,
      dlqDepth: depths.dlq,
    },
  };
}

/** Every outbox row's key and place. */
export async function keyedEvents(environment: DrillEnvironment): Promise<KeyedEvent[]> {
  const rows = await environment.database.db
    .selectFrom("outbox")
    .select(["id", "ordering_key", "seq"])
    .execute();
  return rows.map((row) => ({ id: row.id, orderingKey: row.ordering_key, seq: Number(row.seq) }));
}

/** Rows of the photo feed: the effect of each `photo.posted` event (the example effects count the rest). */
export async function countFeedRows(environment: DrillEnvironment): Promise<number> {
  const { rows } = await sql<{ feed: string }>`SELECT count(*) AS feed FROM photo_feed`.execute(
    environment.database.db,
  );
  return Number(rows[0]?.feed ?? 0);
}
