import { PublishBatchCommand, SubscribeCommand } from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { type OutboxTables as Database, defineHandlers } from "@outbox/client";
import { awsEnvironment, type BootstrappedResources } from "@outbox/devstack";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { awsClients, hangLimit, queueDepth, runEntryPoint, stack, uniqueName } from "@outbox/test-kit";
import { sql } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { consumerNameOf } from "../../apps/consumer/src/consumer-name.js";
import {
  exampleEvent,
  inboxRowsOf,
  queueFor,
  type TestEvent,
  useConsumerTestBed,
} from "../../apps/consumer/test/harness.js";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

const bed = useConsumerTestBed("consumer_names");

/** A second queue subscribed to `resources`' topic with raw delivery: the ordinary fan-out. */
async function secondQueueOn(resources: BootstrappedResources, label: string): Promise<string> {
  const { sns, sqs } = awsClients();
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName(label) }));
    if (QueueUrl === undefined) throw new Error("CreateQueue returned no URL");
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn: resources.topicArn,
        Protocol: "sqs",
        Endpoint: Attributes?.QueueArn,
        Attributes: { RawMessageDelivery: "true" },
      }),
    );
    return QueueUrl;
  } finally {
    sns.destroy();
    sqs.destroy();
  }
}

/** As the relay publishes: the payload as the message, the event's identity as attributes. */
async function publish(topicArn: string, events: readonly TestEvent[]): Promise<void> {
  const { sns } = awsClients();
  try {
    for (let start = 0; start < events.length; start += 10) {
      const { Failed = [] } = await sns.send(
        new PublishBatchCommand({
          TopicArn: topicArn,
          PublishBatchRequestEntries: events.slice(start, start + 10).map((event, index) => ({
            Id: String(index),
            Message: JSON.stringify(event.payload),
            MessageAttributes: {
              event_id: { DataType: "String", StringValue: event.id },
              event_type: { DataType: "String", StringValue: event.type },
            },
          })),
        }),
      );
      if (Failed.length > 0) throw new Error(`publish failed: ${JSON.stringify(Failed)}`);
    }
  } finally {
    sns.destroy();
  }
}

describe("a consumer's name in the inbox", () => {
  it("two services with default names, two queues on one topic, one database: every event's effect in each", async () => {
    const first = await queueFor("fan-out-a");
    const secondUrl = await secondQueueOn(first, "fan-out-b");
    const total = 30;
    const events = Array.from({ length: total }, (_, index) => exampleEvent(`fan-out-${index}`));
    // Each service's effect: a row of its own per event.
    await sql`CREATE TABLE fan_out_effects (service text, event_id uuid, PRIMARY KEY (service, event_id))`.execute(
      bed.database.db,
    );
    const serviceHandlers = (service: string) =>
      defineHandlers<object, Database>(
        {},
        {
          fallback: async (event, { trx }) => {
            await sql`INSERT INTO fan_out_effects VALUES (${service}, ${event.id})`.execute(trx);
          },
        },
      );
    // No `name`: each takes the default.
    const consumers = [first.queueUrl, secondUrl].map((queueUrl, index) =>
      bed.consumer(
        { ...first, queueUrl },
        { handlers: serviceHandlers(`service-${index}`), waitTimeSeconds: 1 },
      ),
    );
    for (const consumer of consumers) consumer.start();
    await publish(first.topicArn, events);

    await expect
      .poll(() => consumers.map((consumer) => consumer.stats().processed + consumer.stats().duplicates), {
        timeout: 30_000,
      })
      .toEqual([total, total]);
    const summaries = await Promise.all(consumers.map((consumer) => consumer.drain()));
    for (const summary of summaries) expect(summary).toMatchObject({ processed: total, duplicates: 0 });
    // Each service's own inbox rows, one per event, under its queue's name.
    const names = [first.queueUrl, secondUrl].map((queueUrl) => consumerNameOf(undefined, queueUrl));
    expect(new Set(names).size).toBe(2);
    for (const name of names) {
      const rows = await inboxRowsOf(bed.database, name);
      expect(rows.map((row) => row.event_id).sort()).toEqual(events.map((event) => event.id).sort());
    }
    const effects = await sql<{ service: string; count: string }>`
      SELECT service, count(*) FROM fan_out_effects GROUP BY service ORDER BY service`.execute(
      bed.database.db,
    );
    expect(effects.rows).toEqual([
      { service: "service-0", count: String(total) },
      { service: "service-1", count: String(total) },
    ]);
    for (const queueUrl of [first.queueUrl, secondUrl]) {
      expect(await queueDepth(bed.sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
    }
  });

  it("is the queue's name by default, FIFO suffix included, and the name given otherwise", () => {
    expect(consumerNameOf(undefined, "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-events")).toBe(
      "orders-events",
    );
    expect(consumerNameOf(undefined, "http://127.0.0.1:4566/000000000000/billing.fifo")).toBe("billing.fifo");
    expect(consumerNameOf("billing", "http://127.0.0.1:4566/000000000000/billing.fifo")).toBe("billing");
  });

  it("unset, while the inbox holds rows of the former default: the daemon refuses to start, one line, exit 78", async () => {
    const queue = await queueFor("former-default");
    await bed.database.db
      .insertInto("inbox")
      .values({ consumer: "consumer", event_id: exampleEvent().id, message_id: "before-the-upgrade" })
      .execute();
    const env = {
      DATABASE_URL: bed.databaseUrl,
      ...awsEnvironment(stack().aws),
      CONSUMER_QUEUE_URL: queue.queueUrl,
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      OPS_HOST: "127.0.0.1",
      OPS_PORT: "0",
    };

    const run = await runEntryPoint("apps/consumer/src/main.ts", [], env);

    // Refused once it has read the inbox: exit 78, the reason in one line on stderr, nothing consumed.
    expect(run.code, run.stderr + run.stdout).toBe(78);
    const queueName = consumerNameOf(undefined, queue.queueUrl);
    expect(run.stderr.trim().split("\n")).toEqual([
      `consumer: config error: CONSUMER_NAME: is unset, and the inbox holds rows of the former default "consumer": set CONSUMER_NAME=consumer if they are this service's (its processed events stay processed), or CONSUMER_NAME=${queueName} (its queue's name) if another service wrote them`,
    ]);
    expect(run.stdout).not.toContain('"msg":"consuming"');
  });
});
