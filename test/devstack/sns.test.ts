import {
  BatchEntryIdsNotDistinctException,
  BatchRequestTooLongException,
  CreateTopicCommand,
  DeleteTopicCommand,
  EmptyBatchRequestException,
  GetSubscriptionAttributesCommand,
  GetTopicAttributesCommand,
  InvalidParameterException,
  ListSubscriptionsByTopicCommand,
  ListTopicsCommand,
  NotFoundException,
  PublishBatchCommand,
  PublishCommand,
  SetSubscriptionAttributesCommand,
  SetTopicAttributesCommand,
  SubscribeCommand,
  TooManyEntriesInBatchRequestException,
  UnsubscribeCommand,
} from "@aws-sdk/client-sns";
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { bootstrapResources } from "@outbox/devstack";
import { awsClients, stack, uniqueName } from "@outbox/test-kit";
import { afterAll, describe, expect, it } from "vitest";

const { sns, sqs } = awsClients();
afterAll(() => {
  sns.destroy();
  sqs.destroy();
});

/** Drains `count` messages (or whatever arrives within a few seconds). */
async function receive(client: SQSClient, queueUrl: string, count: number): Promise<Message[]> {
  const messages: Message[] = [];
  // Only a hang limit: the loop ends as soon as the messages are there.
  const deadline = Date.now() + 30_000;
  while (messages.length < count && Date.now() < deadline) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ["All"],
        // local-aws-sqs reads only the legacy field for system attributes; AWS reads the new one.
        AttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    messages.push(...Messages);
    if (Messages.length > 0) {
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  }
  return messages;
}

describe("topics", () => {
  it("creates idempotently, lists, describes and deletes", async () => {
    const name = uniqueName("topic");
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name }));
    expect(TopicArn).toMatch(new RegExp(`^arn:aws:sns:us-east-1:\\d{12}:${name}$`));
    expect((await sns.send(new CreateTopicCommand({ Name: name }))).TopicArn).toBe(TopicArn);

    const { Topics } = await sns.send(new ListTopicsCommand({}));
    expect(Topics?.map((t) => t.TopicArn)).toContain(TopicArn);

    const { Attributes } = await sns.send(new GetTopicAttributesCommand({ TopicArn }));
    expect(Attributes).toMatchObject({ TopicArn, SubscriptionsConfirmed: "0" });

    await sns.send(new DeleteTopicCommand({ TopicArn }));
    await expect(sns.send(new GetTopicAttributesCommand({ TopicArn }))).rejects.toBeInstanceOf(
      NotFoundException,
    );
  });

  it("creates FIFO topics and checks the name/attribute pairing", async () => {
    const name = `${uniqueName("fifo")}.fifo`;
    const { TopicArn } = await sns.send(
      new CreateTopicCommand({
        Name: name,
        Attributes: { FifoTopic: "true", ContentBasedDeduplication: "true" },
      }),
    );
    const { Attributes } = await sns.send(new GetTopicAttributesCommand({ TopicArn }));
    expect(Attributes).toMatchObject({ FifoTopic: "true", ContentBasedDeduplication: "true" });
    await expect(
      sns.send(new CreateTopicCommand({ Name: uniqueName("x"), Attributes: { FifoTopic: "true" } })),
    ).rejects.toBeInstanceOf(InvalidParameterException);
    await expect(
      sns.send(new CreateTopicCommand({ Name: `${uniqueName("x")}.fifo` })),
    ).rejects.toBeInstanceOf(InvalidParameterException);
  });

  it("answers NotFound (typed NotFoundException, HTTP 404) for unknown topics", async () => {
    const error = await sns
      .send(new PublishCommand({ TopicArn: "arn:aws:sns:us-east-1:000000000000:nope", Message: "x" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundException);
    expect(error).toMatchObject({ name: "NotFoundException", $metadata: { httpStatusCode: 404 } });
  });
});

describe("subscriptions", () => {
  it("subscribes, lists, reads and sets attributes, unsubscribes", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("subs") });
    const { Subscriptions } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: r.topicArn }));
    expect(Subscriptions).toEqual([
      expect.objectContaining({ SubscriptionArn: r.subscriptionArn, Protocol: "sqs", Endpoint: r.queueArn }),
    ]);
    const again = await sns.send(
      new SubscribeCommand({ TopicArn: r.topicArn, Protocol: "sqs", Endpoint: r.queueArn }),
    );
    expect(again.SubscriptionArn).toBe(r.subscriptionArn);

    await sns.send(
      new SetSubscriptionAttributesCommand({
        SubscriptionArn: r.subscriptionArn,
        AttributeName: "RawMessageDelivery",
        AttributeValue: "true",
      }),
    );
    const { Attributes } = await sns.send(
      new GetSubscriptionAttributesCommand({ SubscriptionArn: r.subscriptionArn }),
    );
    expect(Attributes).toMatchObject({
      RawMessageDelivery: "true",
      TopicArn: r.topicArn,
      Endpoint: r.queueArn,
    });
    await expect(
      sns.send(
        new SetSubscriptionAttributesCommand({
          SubscriptionArn: r.subscriptionArn,
          AttributeName: "RawMessageDelivery",
          AttributeValue: "maybe",
        }),
      ),
    ).rejects.toBeInstanceOf(InvalidParameterException);

    await sns.send(new UnsubscribeCommand({ SubscriptionArn: r.subscriptionArn }));
    const after = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: r.topicArn }));
    expect(after.Subscriptions ?? []).toEqual([]);
    await expect(
      sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: r.subscriptionArn })),
    ).rejects.toBeInstanceOf(NotFoundException);
  });
});

describe("publish → SQS", () => {
  it("delivers the SNS notification envelope", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("envelope") });
    const { MessageId } = await sns.send(
      new PublishCommand({
        TopicArn: r.topicArn,
        Message: '{"hello":"world"}',
        Subject: "greeting",
        MessageAttributes: {
          event_id: { DataType: "String", StringValue: "e-1" },
          n: { DataType: "Number", StringValue: "42" },
          b: { DataType: "Binary", BinaryValue: new Uint8Array([1, 2, 3]) },
        },
      }),
    );
    const [message] = await receive(sqs, r.queueUrl, 1);
    expect(message?.MessageAttributes).toBeUndefined();
    const envelope = JSON.parse(message?.Body ?? "{}");
    expect(envelope).toMatchObject({
      Type: "Notification",
      MessageId,
      TopicArn: r.topicArn,
      Subject: "greeting",
      Message: '{"hello":"world"}',
      SignatureVersion: "1",
      MessageAttributes: {
        event_id: { Type: "String", Value: "e-1" },
        n: { Type: "Number", Value: "42" },
        b: { Type: "Binary", Value: "AQID" },
      },
    });
    expect(new Date(envelope.Timestamp).toISOString()).toBe(envelope.Timestamp);
    for (const key of ["Signature", "SigningCertURL", "UnsubscribeURL"])
      expect(envelope[key]).toEqual(expect.any(String));
  });

  it("delivers raw messages with their attributes as SQS message attributes", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("raw"), rawDelivery: true });
    await sns.send(
      new PublishCommand({
        TopicArn: r.topicArn,
        Message: "plain body",
        MessageAttributes: { event_id: { DataType: "String", StringValue: "e-2" } },
      }),
    );
    const [message] = await receive(sqs, r.queueUrl, 1);
    expect(message?.Body).toBe("plain body");
    expect(message?.MessageAttributes?.event_id).toMatchObject({ DataType: "String", StringValue: "e-2" });
  });

  it("carries FIFO group and deduplication ids through to a FIFO queue", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("fifo"), fifo: true });
    const { SequenceNumber } = await sns.send(
      new PublishCommand({
        TopicArn: r.topicArn,
        Message: "first",
        MessageGroupId: "order-7",
        MessageDeduplicationId: "d-1",
      }),
    );
    expect(SequenceNumber).toMatch(/^\d+$/);
    const batch = await sns.send(
      new PublishBatchCommand({
        TopicArn: r.topicArn,
        PublishBatchRequestEntries: [
          { Id: "a", Message: "second", MessageGroupId: "order-7", MessageDeduplicationId: "d-2" },
          { Id: "b", Message: "third", MessageGroupId: "order-7", MessageDeduplicationId: "d-3" },
        ],
      }),
    );
    expect(batch.Successful?.map((s) => s.SequenceNumber)).toEqual([expect.any(String), expect.any(String)]);
    const messages = await receive(sqs, r.queueUrl, 3);
    expect(messages.map((m) => JSON.parse(m.Body ?? "{}").Message)).toEqual(["first", "second", "third"]);
    expect(messages.map((m) => m.Attributes?.MessageGroupId)).toEqual(["order-7", "order-7", "order-7"]);
    expect(JSON.parse(messages[0]?.Body ?? "{}").SequenceNumber).toBe(SequenceNumber);

    await expect(
      sns.send(new PublishCommand({ TopicArn: r.topicArn, Message: "no group" })),
    ).rejects.toBeInstanceOf(InvalidParameterException);
    await expect(
      sns.send(new PublishCommand({ TopicArn: r.topicArn, Message: "no dedup", MessageGroupId: "g" })),
    ).rejects.toBeInstanceOf(InvalidParameterException);
  });

  it("rejects messages over 256 KiB", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("big") });
    await expect(
      sns.send(new PublishCommand({ TopicArn: r.topicArn, Message: "x".repeat(262_145) })),
    ).rejects.toBeInstanceOf(InvalidParameterException);
  });
});

describe("PublishBatch limits", () => {
  const entries = (n: number, size = 10) =>
    Array.from({ length: n }, (_, i) => ({ Id: `m${i}`, Message: "x".repeat(size) }));

  it("publishes up to 10 entries and reports each as Successful", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("batch"), rawDelivery: true });
    const result = await sns.send(
      new PublishBatchCommand({ TopicArn: r.topicArn, PublishBatchRequestEntries: entries(10) }),
    );
    expect(result.Successful?.map((s) => s.Id)).toEqual(entries(10).map((e) => e.Id));
    expect(result.Failed ?? []).toEqual([]);
    expect(await receive(sqs, r.queueUrl, 10)).toHaveLength(10);
  });

  it("raises the typed request-level errors AWS documents", async () => {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: uniqueName("limits") }));
    const send = (PublishBatchRequestEntries: Array<{ Id: string; Message: string }>) =>
      sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries }));
    await expect(send(entries(11))).rejects.toBeInstanceOf(TooManyEntriesInBatchRequestException);
    await expect(send([])).rejects.toBeInstanceOf(EmptyBatchRequestException);
    await expect(send([...entries(1), ...entries(1)])).rejects.toBeInstanceOf(
      BatchEntryIdsNotDistinctException,
    );
    await expect(send(entries(2, 140_000))).rejects.toBeInstanceOf(BatchRequestTooLongException);
    await expect(
      sns.send(
        new PublishBatchCommand({
          TopicArn: "arn:aws:sns:us-east-1:000000000000:missing",
          PublishBatchRequestEntries: entries(1),
        }),
      ),
    ).rejects.toBeInstanceOf(NotFoundException);
  });

  it("reports an invalid entry as Failed with HTTP 200, not as an exception", async () => {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: uniqueName("partial") }));
    const result = await sns.send(
      new PublishBatchCommand({
        TopicArn,
        PublishBatchRequestEntries: [
          { Id: "ok", Message: "fine" },
          { Id: "bad", Message: "x", MessageAttributes: { a: { DataType: "Nonsense", StringValue: "v" } } },
        ],
      }),
    );
    expect(result.$metadata.httpStatusCode).toBe(200);
    expect(result.Successful?.map((s) => s.Id)).toEqual(["ok"]);
    expect(result.Failed).toEqual([
      expect.objectContaining({ Id: "bad", Code: "InvalidParameter", SenderFault: true }),
    ]);
  });
});

describe("MaximumMessageSize", () => {
  const KiB = 1024;
  const setSize = (TopicArn: string, value: string) =>
    sns.send(
      new SetTopicAttributesCommand({ TopicArn, AttributeName: "MaximumMessageSize", AttributeValue: value }),
    );
  const sizeOf = async (TopicArn: string) =>
    (await sns.send(new GetTopicAttributesCommand({ TopicArn }))).Attributes?.MaximumMessageSize;

  it("is omitted by GetTopicAttributes until set, and takes 1 024 to 1 048 576 bytes", async () => {
    const { TopicArn = "" } = await sns.send(new CreateTopicCommand({ Name: uniqueName("size") }));
    expect(await sizeOf(TopicArn)).toBeUndefined();
    await setSize(TopicArn, "1048576");
    expect(await sizeOf(TopicArn)).toBe("1048576");
    await setSize(TopicArn, "1024");
    expect(await sizeOf(TopicArn)).toBe("1024");
    for (const bad of ["1023", "1048577", "", "256KiB", "2e5", "-1"]) {
      await expect(setSize(TopicArn, bad)).rejects.toBeInstanceOf(InvalidParameterException);
    }
    expect(await sizeOf(TopicArn)).toBe("1024");

    const { TopicArn: created } = await sns.send(
      new CreateTopicCommand({ Name: uniqueName("size"), Attributes: { MaximumMessageSize: "524288" } }),
    );
    expect(await sizeOf(created ?? "")).toBe("524288");
    await expect(
      sns.send(
        new CreateTopicCommand({ Name: uniqueName("size"), Attributes: { MaximumMessageSize: "2000000" } }),
      ),
    ).rejects.toThrow(/MaximumMessageSize must be an integer between 1024 and 1048576/);
  });

  it("lets a raised topic take a 900 KiB message, delivered raw to SQS byte for byte", async () => {
    const r = await bootstrapResources(stack().aws, {
      name: uniqueName("large"),
      rawDelivery: true,
      maximumMessageSize: 1_048_576,
    });
    const body = JSON.stringify({ blob: "é".repeat(450 * KiB) }); // 900 KiB of UTF-8, and a little
    await sns.send(
      new PublishCommand({
        TopicArn: r.topicArn,
        Message: body,
        MessageAttributes: { event_id: { DataType: "String", StringValue: "e-large" } },
      }),
    );
    const [message] = await receive(sqs, r.queueUrl, 1);
    expect(message?.Body).toBe(body);
    expect(message?.MessageAttributes?.event_id?.StringValue).toBe("e-large");
  });

  it("refuses Publish over the topic's limit, body and attributes counted", async () => {
    const { TopicArn = "" } = await sns.send(new CreateTopicCommand({ Name: uniqueName("limit") }));
    await expect(sns.send(new PublishCommand({ TopicArn, Message: "x".repeat(262_145) }))).rejects.toThrow(
      "Invalid parameter: Message too long",
    );
    await setSize(TopicArn, "2048");
    await expect(
      sns.send(new PublishCommand({ TopicArn, Message: "x".repeat(2_048) })),
    ).resolves.toBeDefined();
    // 2 040 + "a" + "String" + "xx" = 2 049 bytes.
    await expect(
      sns.send(
        new PublishCommand({
          TopicArn,
          Message: "x".repeat(2_040),
          MessageAttributes: { a: { DataType: "String", StringValue: "xx" } },
        }),
      ),
    ).rejects.toBeInstanceOf(InvalidParameterException);
  });

  it("bounds a PublishBatch's total by the topic's limit", async () => {
    const { TopicArn = "" } = await sns.send(
      new CreateTopicCommand({ Name: uniqueName("batch"), Attributes: { MaximumMessageSize: "1048576" } }),
    );
    const entries = (n: number, size: number) =>
      Array.from({ length: n }, (_, i) => ({ Id: `m${i}`, Message: "x".repeat(size) }));
    const two = await sns.send(
      new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: entries(2, 500 * KiB) }),
    );
    expect(two.Successful).toHaveLength(2);
    await expect(
      sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: entries(3, 400 * KiB) })),
    ).rejects.toBeInstanceOf(BatchRequestTooLongException);
  });

  it("keeps a topic above 256 KiB to 100 subscriptions", async () => {
    const { TopicArn = "" } = await sns.send(new CreateTopicCommand({ Name: uniqueName("many") }));
    const endpoint = (i: number) => `arn:aws:sqs:us-east-1:000000000000:${uniqueName("q")}-${i}`;
    const arns: string[] = [];
    for (let i = 0; i < 101; i += 1) {
      const { SubscriptionArn = "" } = await sns.send(
        new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: endpoint(i) }),
      );
      arns.push(SubscriptionArn);
    }
    await expect(setSize(TopicArn, "262145")).rejects.toThrow(/at most 100 subscriptions, it would have 101/);
    await setSize(TopicArn, "262144");
    await sns.send(new UnsubscribeCommand({ SubscriptionArn: arns[0] }));
    await setSize(TopicArn, "1048576");
    expect(await sizeOf(TopicArn)).toBe("1048576");
    await expect(
      sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: endpoint(101) })),
    ).rejects.toBeInstanceOf(InvalidParameterException);
    await sns.send(new DeleteTopicCommand({ TopicArn }));
  });
});
