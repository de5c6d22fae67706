import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  type QueueAttributeName,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { type AwsEndpoints, sqsClient } from "@outbox/devstack";
import { stack, uniqueName } from "@outbox/test-kit";
import { afterAll, describe, expect, it } from "vitest";

// The run's SQS (local-aws-sqs on the embedded backend) against moto's, which counts receives as AWS
// does. moto serves every service it mocks on the stack's S3 port; the containers backend has none.
const { aws } = stack();
const motoEndpoint = aws.s3Endpoint;

async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string> = {}) {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: "30", ...attributes } }),
  );
  if (QueueUrl === undefined) throw new Error("no queue URL");
  return QueueUrl;
}

async function receiveOne(sqs: SQSClient, queueUrl: string): Promise<Message | undefined> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ["ApproximateReceiveCount"],
      // local-aws-sqs reads the legacy AttributeNames only (see startEmbeddedSqs).
      AttributeNames: ["ApproximateReceiveCount" as QueueAttributeName],
    }),
  );
  return Messages?.[0];
}

const countOf = (message: Message | undefined) => message?.Attributes?.ApproximateReceiveCount;

/** Receive → change visibility to 0 (single and batch calls) → receive, as AWS counts them: 1, 2, 3. */
async function probe(sqs: SQSClient): Promise<(string | undefined)[]> {
  const queueUrl = await createQueue(sqs, uniqueName("count"));
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "m" }));
  const first = await receiveOne(sqs, queueUrl);
  await sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl,
      ReceiptHandle: first?.ReceiptHandle,
      VisibilityTimeout: 0,
    }),
  );
  const second = await receiveOne(sqs, queueUrl);
  // A heartbeat that extends the lease, then a release, in batch calls: neither is a receive.
  for (const seconds of [30, 0]) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: [{ Id: "0", ReceiptHandle: second?.ReceiptHandle, VisibilityTimeout: seconds }],
      }),
    );
  }
  const third = await receiveOne(sqs, queueUrl);
  return [countOf(first), countOf(second), countOf(third)];
}

/** maxReceiveCount 2: received and released twice, then the DLQ; where is the message after each? */
async function redrive(sqs: SQSClient): Promise<string[]> {
  const name = uniqueName("redrive");
  const dlqUrl = await createQueue(sqs, `${name}-dlq`);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }),
  );
  const queueUrl = await createQueue(sqs, name, {
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: 2 }),
  });
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "m" }));
  const seen: string[] = [];
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const message = await receiveOne(sqs, queueUrl);
    if (message === undefined) break;
    seen.push(`queue ${countOf(message)}`);
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: message.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
  }
  if ((await receiveOne(sqs, dlqUrl)) !== undefined) seen.push("dlq");
  return seen;
}

describe.runIf(stack().backend === "embedded" && motoEndpoint !== undefined)("receive counts", () => {
  const local = sqsClient(aws);
  const moto = sqsClient({ ...aws, sqsEndpoint: motoEndpoint as string } satisfies AwsEndpoints);
  afterAll(() => {
    local.destroy();
    moto.destroy();
  });

  it("count a receive, never a visibility change, as moto (and AWS) do", async () => {
    const expected = ["1", "2", "3"];
    expect(await probe(moto)).toEqual(expected);
    expect(await probe(local)).toEqual(expected);
  });

  it("send a message to the DLQ after maxReceiveCount receives, releases not counted", async () => {
    const expected = ["queue 1", "queue 2", "dlq"];
    expect(await redrive(moto)).toEqual(expected);
    expect(await redrive(local)).toEqual(expected);
  });
});
