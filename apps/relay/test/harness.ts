import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { type BootstrappedResources, bootstrapResources } from "@outbox/devstack";
import { createDatabase, type DatabaseHandle, enqueue, migrateToLatest, type NewEvent } from "@outbox/shared";
import { stack } from "../../../test/support/aws.js";
import { createTestDatabase } from "../../../test/support/database.js";
import { uniqueName } from "../../../test/support/names.js";

/** A fresh, migrated database of its own. */
export async function migratedDatabase(label: string): Promise<{ url: string; handle: DatabaseHandle }> {
  const url = await createTestDatabase(label);
  const handle = createDatabase({
    url,
    service: "relay-test",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await migrateToLatest(handle.db);
  return { url, handle };
}

/** Topic → queue with raw delivery, so SQS messages carry the SNS message attributes as they were sent. */
export function topicWithQueue(prefix: string, fifo = false): Promise<BootstrappedResources> {
  return bootstrapResources(stack().aws, { name: uniqueName(prefix), fifo, rawDelivery: true });
}

export interface Received {
  readonly body: string;
  readonly attributes: Record<string, string>;
}

/**
 * Receives (and deletes) until `expected` messages arrived and the queue stayed empty for `quietMs`
 * after that — so a duplicate arriving late is still counted.
 */
export async function receiveAll(
  sqs: SQSClient,
  queueUrl: string,
  expected: number,
  { timeoutMs = 30_000, quietMs = 500 } = {},
): Promise<Received[]> {
  const received: Received[] = [];
  const until = Date.now() + timeoutMs;
  let quietSince = Date.now();
  while (Date.now() < until) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) {
      if (received.length >= expected && Date.now() - quietSince >= quietMs) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    quietSince = Date.now();
    for (const message of Messages) {
      const attributes: Record<string, string> = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        if (value.StringValue !== undefined) attributes[name] = value.StringValue;
      }
      received.push({ body: message.Body ?? "", attributes });
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle ?? "",
        })),
      }),
    );
  }
  return received;
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
