import { PublishBatchCommand } from "@aws-sdk/client-sns";
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { bootstrapResources, snsClient, sqsClient, startStack } from "@outbox/devstack";

// PublishBatch → fan-out → SQS, end to end through the real SDK clients: the emulator must not
// be what limits a relay benchmark.
const TOTAL = Number(process.env.MESSAGES ?? 20_000);
const PUBLISHERS = 8;
const POLLERS = 8;

const stack = await startStack({ backend: "embedded" });
const sns = snsClient(stack.aws);
const sqs = sqsClient(stack.aws);
try {
  const { topicArn, queueUrl } = await bootstrapResources(stack.aws, { name: "bench", rawDelivery: true });
  const batches = Math.ceil(TOTAL / 10);
  let nextBatch = 0;
  let received = 0;
  const started = performance.now();

  const publisher = async () => {
    for (let b = nextBatch++; b < batches; b = nextBatch++) {
      const entries = Array.from({ length: Math.min(10, TOTAL - b * 10) }, (_, i) => ({
        Id: String(i),
        Message: JSON.stringify({ batch: b, index: i, payload: "x".repeat(200) }),
        MessageAttributes: { event_id: { DataType: "String", StringValue: `${b}-${i}` } },
      }));
      const result = await sns.send(
        new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries }),
      );
      if (result.Failed?.length) throw new Error(`batch ${b}: ${result.Failed.length} entries failed`);
    }
  };
  const poller = async () => {
    while (received < TOTAL) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length === 0) continue;
      received += Messages.length;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  };

  const pollers = Array.from({ length: POLLERS }, poller);
  await Promise.all(Array.from({ length: PUBLISHERS }, publisher));
  const published = performance.now();
  await Promise.all(pollers);
  const done = performance.now();
  const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
  console.log(
    `published ${TOTAL} messages in ${Math.round(published - started)} ms (${rate(TOTAL, published - started)} msg/s)`,
  );
  console.log(
    `received  ${received} messages in ${Math.round(done - started)} ms (${rate(received, done - started)} msg/s end to end)`,
  );
} finally {
  sns.destroy();
  sqs.destroy();
  await stack.stop();
}
