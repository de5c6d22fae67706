import { randomUUID } from "node:crypto";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import { awsEnvironment, type BootstrappedResources, bootstrapResources } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import {
  createMigratedTestDatabase,
  type DaemonProcess,
  stack,
  startDaemonProcess,
  uniqueName,
} from "@outbox/test-kit";
import { sql } from "kysely";

/** An event type an attacker chose: markup that would run if a page inserted it as HTML. */
export const HOSTILE_TYPE = `<img src=x onerror="document.title='pwned'">`;

/** What the seed put where: the counts a page must show before anything is done. */
export const SEEDED = {
  /** Keys held by a dead head, each with WAITING events behind it. */
  blockedKeys: 3,
  waitingPerKey: 4,
  /** Dead rows: the 3 heads, 2 more of another kind, and the hostile one (no key). */
  deadRows: 6,
  /** DLQ messages by reason kind. */
  letters: { unknown_event_type: 3, body_not_json: 2, redrive_policy: 1 },
} as const;

export interface ConsoleStack {
  readonly url: string;
  readonly handle: DatabaseHandle;
  readonly queues: BootstrappedResources;
  /** The console's environment (its database, SQS and the two queues), for another console process. */
  readonly env: Readonly<Record<string, string>>;
}

/** A fresh database and queue pair, seeded as the console's tests expect (SEEDED). */
export async function seedConsoleStack(label: string, sqs: SQSClient): Promise<ConsoleStack> {
  const { url, handle } = await createMigratedTestDatabase(label, { service: "console-test" });
  const queues = await bootstrapResources(stack().aws, {
    name: uniqueName(label),
    fifo: false,
    rawDelivery: true,
  });
  // Published in the last hour (the flow's rates and lag), and processed by a consumer.
  await sql`
    INSERT INTO outbox (id, topic, event_type, payload, created_at, available_at, published_at)
    SELECT gen_random_uuid(), 'orders', 'order.placed', '{}'::json, now() - n * interval '20 seconds',
           now() - n * interval '20 seconds', now() - n * interval '20 seconds' + interval '1500 milliseconds'
    FROM generate_series(1, 150) AS n
  `.execute(handle.db);
  await sql`
    INSERT INTO inbox (consumer, event_id, message_id, processed_at)
    SELECT 'photo-indexer', gen_random_uuid(), 'm-' || n, now() - n * interval '25 seconds'
    FROM generate_series(1, 120) AS n
  `.execute(handle.db);
  // Blocked keys: a dead head each, events waiting behind it.
  for (let key = 1; key <= SEEDED.blockedKeys; key += 1) {
    await sql`
      INSERT INTO outbox (id, topic, ordering_key, event_type, payload, attempts, dead_at, last_error)
      VALUES (${randomUUID()}, 'orders', ${`customer-${key}`}, 'order.placed', '{"total": 12}'::json, 5,
              now() - ${key * 600} * interval '1 second',
              'after 5 attempts: InvalidParameter: Invalid parameter: Message too long')
    `.execute(handle.db);
    await sql`
      INSERT INTO outbox (id, topic, ordering_key, event_type, payload)
      SELECT gen_random_uuid(), 'orders', ${`customer-${key}`}, 'order.paid', '{}'::json
      FROM generate_series(1, ${SEEDED.waitingPerKey})
    `.execute(handle.db);
  }
  await sql`
    INSERT INTO outbox (id, topic, event_type, payload, attempts, dead_at, last_error)
    SELECT gen_random_uuid(), 'billing', 'invoice.issued', '{}'::json, 0, now() - interval '2 hours',
           'no topic ARN for the topic "billing" (RELAY_TOPIC_ARNS)'
    FROM generate_series(1, 2)
  `.execute(handle.db);
  await sql`
    INSERT INTO outbox (id, topic, event_type, payload, attempts, dead_at, last_error)
    VALUES (${randomUUID()}, 'orders', ${HOSTILE_TYPE}, ${'{"note": "<script>alert(1)</script>"}'}::json, 5, now(),
            ${`after 5 attempts: InvalidParameter: ${HOSTILE_TYPE}`})
  `.execute(handle.db);
  // A republish run stopped half-way over the published hour.
  await sql`
    INSERT INTO relay_republish (id, from_published, to_published, rate, cursor_published, cursor_seq, sent)
    SELECT ${randomUUID()}::uuid, now() - interval '2 hours', now(), 50, published_at, seq, 70
    FROM outbox WHERE published_at IS NOT NULL ORDER BY published_at LIMIT 1 OFFSET 69
  `.execute(handle.db);
  // The DLQ: poison messages of two reasons, and one its redrive policy moved (no reason).
  const letters: [string, string | null, string][] = [
    ...Array.from({ length: SEEDED.letters.unknown_event_type }, (): [string, string | null, string] => [
      "photo.tagged",
      'unknown_event_type: no handler for the event type "photo.tagged"',
      "{}",
    ]),
    ...Array.from({ length: SEEDED.letters.body_not_json }, (): [string, string | null, string] => [
      "photo.posted",
      "body_not_json: Unexpected token o in JSON",
      "not json",
    ]),
    ["photo.posted", null, '{"id": 1}'],
  ];
  for (const [type, reason, body] of letters) {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queues.dlqUrl,
        MessageBody: body,
        MessageAttributes: {
          [EVENT_ID_ATTRIBUTE]: { DataType: "String", StringValue: randomUUID() },
          [EVENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: type },
          ...(reason === null ? {} : { poison_reason: { DataType: "String", StringValue: reason } }),
        },
      }),
    );
  }
  const env = {
    ...awsEnvironment(stack().aws),
    DATABASE_URL: url,
    CONSUMER_QUEUE_URL: queues.queueUrl,
    CONSUMER_DLQ_URL: queues.dlqUrl,
    // The relay's routing: the console may start and resume republish runs.
    RELAY_TOPIC_ARNS: `orders=${queues.topicArn}`,
    CONSOLE_PORT: "0",
    LOG_LEVEL: "info",
  };
  return { url, handle, queues, env };
}

/** `pnpm console` as a real process; resolves once it listens, with its URL. */
export async function startConsoleProcess(
  env: Readonly<Record<string, string>>,
  args: readonly string[] = [],
): Promise<{ process: DaemonProcess; url: string }> {
  const daemon = startDaemonProcess("apps/console/src/main.ts", env, { name: "console", args: [...args] });
  const listening = await daemon.waitForLog("console listening", {}, 60_000);
  return { process: daemon, url: String(listening.url) };
}
