import { randomUUID } from "node:crypto";
import {
  type MessageAttributeValue,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { type BootstrappedResources, bootstrapResources } from "@outbox/devstack";
import type { ExampleEffectsTable } from "@outbox/example-handlers";
import { createLogger, type DatabaseHandle, type Logger } from "@outbox/shared";
import { awsClients, createMigratedTestDatabase, stack, uniqueName } from "@outbox/test-kit";
import { afterAll, beforeAll } from "vitest";
import { type Consumer, type ConsumerOptions, createConsumer } from "../src/index.js";

/** Test logs stay quiet unless TEST_LOG_LEVEL asks for them. */
export function testLogger(): Logger {
  return createLogger({
    service: "consumer-test",
    version: "0",
    level: process.env.TEST_LOG_LEVEL ?? "silent",
  });
}

/** What a consumer test file runs against; the fields are set once the file's beforeAll has run. */
export interface ConsumerTestBed {
  readonly sqs: SQSClient;
  /** A migrated database of the file's own (pool of 30). */
  readonly database: DatabaseHandle;
  readonly databaseUrl: string;
  /** A consumer of `queue` on the bed's database and SQS client, logging quietly unless given a `log`; `options` give the rest. */
  consumer<DB>(
    queue: BootstrappedResources,
    options: Omit<ConsumerOptions<DB>, "pool" | "sqs" | "queueUrl" | "log"> & { log?: Logger },
  ): Consumer;
}

/** Registers the file's beforeAll/afterAll: an SQS client and a migrated database named after `label`. */
export function useConsumerTestBed(label: string): ConsumerTestBed {
  const bed = {
    consumer: (queue, options) =>
      createConsumer({
        pool: bed.database.pool,
        sqs: bed.sqs,
        queueUrl: queue.queueUrl,
        log: testLogger(),
        ...options,
      }),
  } as ConsumerTestBed;

  beforeAll(async () => {
    const { sqs } = awsClients();
    const { url, handle } = await createMigratedTestDatabase(label, {
      service: "consumer-test",
      poolMax: 30,
    });
    Object.assign(bed, { sqs, database: handle, databaseUrl: url });
  });
  afterAll(async () => {
    bed.sqs.destroy();
    await bed.database.close(5_000);
  });
  return bed;
}

export function queueFor(
  label: string,
  options: { maxReceiveCount?: number; visibilityTimeoutSeconds?: number; fifo?: boolean } = {},
): Promise<BootstrappedResources> {
  return bootstrapResources(stack().aws, { name: uniqueName(label), rawDelivery: true, ...options });
}

export interface TestEvent {
  id: string;
  type: string;
  payload: unknown;
  headers?: Record<string, string>;
  /** FIFO queues: the message group (the relay's ordering key); the event id is the dedup id. */
  group?: string;
}

export function exampleEvent(name = "thing"): TestEvent {
  return { id: randomUUID(), type: "example.created", payload: { name } };
}

function attributes(event: TestEvent): Record<string, MessageAttributeValue> {
  const values: Record<string, MessageAttributeValue> = {
    event_id: { DataType: "String", StringValue: event.id },
    event_type: { DataType: "String", StringValue: event.type },
  };
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    values[name] = { DataType: "String", StringValue: value };
  }
  return values;
}

/**
 * As the relay publishes with raw delivery: the payload is the body, the ids are attributes. In
 * order, 10 a call; returns the SQS MessageIds in the same order.
 */
export async function sendRaw(
  sqs: SQSClient,
  queueUrl: string,
  events: readonly TestEvent[],
): Promise<string[]> {
  const messageIds: string[] = [];
  for (let start = 0; start < events.length; start += 10) {
    const { Successful = [], Failed = [] } = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: events.slice(start, start + 10).map((event, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify(event.payload),
          MessageAttributes: attributes(event),
          MessageGroupId: event.group,
          MessageDeduplicationId: event.group === undefined ? undefined : event.id,
        })),
      }),
    );
    if (Failed.length > 0) throw new Error(`send failed: ${JSON.stringify(Failed)}`);
    const byId = new Map(Successful.map((entry) => [entry.Id, entry.MessageId ?? ""]));
    events.slice(start, start + 10).forEach((_, index) => {
      messageIds.push(byId.get(String(index)) ?? "");
    });
  }
  return messageIds;
}

/** The topic `envelopeBody` says its notifications come from: the envelope tests' CONSUMER_TOPIC_ARNS. */
export const ENVELOPE_TOPIC_ARN = "arn:aws:sns:us-east-1:000000000000:events";

/** The body SNS delivers without raw delivery; a fresh SNS MessageId each time, like a re-publish. */
export function envelopeBody(
  event: TestEvent,
  message: string = JSON.stringify(event.payload),
  topicArn: string = ENVELOPE_TOPIC_ARN,
): string {
  const envelopeAttributes: Record<string, { Type: string; Value: string }> = {
    event_id: { Type: "String", Value: event.id },
    event_type: { Type: "String", Value: event.type },
  };
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    envelopeAttributes[name] = { Type: "String", Value: value };
  }
  return JSON.stringify({
    Type: "Notification",
    MessageId: randomUUID(),
    TopicArn: topicArn,
    Message: message,
    Timestamp: new Date().toISOString(),
    SignatureVersion: "1",
    Signature: "unsigned",
    MessageAttributes: envelopeAttributes,
  });
}

/** One message as is; `fifo` for FIFO queues. Returns its SQS MessageId. */
export async function sendBody(
  sqs: SQSClient,
  queueUrl: string,
  body: string,
  messageAttributes?: Record<string, MessageAttributeValue>,
  fifo?: { group: string; deduplicationId: string },
): Promise<string> {
  const { MessageId } = await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageAttributes: messageAttributes,
      MessageGroupId: fifo?.group,
      MessageDeduplicationId: fifo?.deduplicationId,
    }),
  );
  return MessageId ?? "";
}

export async function effectCount(database: DatabaseHandle): Promise<number> {
  const { count } = await database.db
    .withTables<{ example_effects: ExampleEffectsTable }>()
    .selectFrom("example_effects")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** The inbox rows one consumer (by its `name`) committed. */
export function inboxRowsOf(database: DatabaseHandle, consumer: string): Promise<{ event_id: string }[]> {
  return database.db.selectFrom("inbox").select("event_id").where("consumer", "=", consumer).execute();
}

/** The example_effects rows of one event: none when its handler's transaction was rolled back. */
export function effectRowsOf(database: DatabaseHandle, eventId: string): Promise<{ event_id: string }[]> {
  return database.db
    .withTables<{ example_effects: ExampleEffectsTable }>()
    .selectFrom("example_effects")
    .select("event_id")
    .where("event_id", "=", eventId)
    .execute();
}
