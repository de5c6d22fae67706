import { CreateTopicCommand, PublishCommand, SubscribeCommand } from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { type LocalAws, StatsClient, snsClient, sqsClient, startLocalAws } from "@outbox/devstack";
import { afterAll, beforeAll, expect, it } from "vitest";

// Reset is global, so it is tested on a private emulator rather than the run's shared one.
let local: LocalAws | undefined;
const deliveryErrors: string[] = [];

beforeAll(async () => {
  local = await startLocalAws({
    statsMaxTrackedEventIds: 2,
    onDeliveryError: (error) => deliveryErrors.push(error.message),
  });
});
afterAll(() => local?.stop());

it("resets, bounds the remembered event ids, and counts failed deliveries", async () => {
  const { aws, sns: emulator } = local as LocalAws;
  const sns = snsClient(aws);
  const sqs = sqsClient(aws);
  const stats = new StatsClient(emulator.statsUrl);
  try {
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: "reset" }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "reset" }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }),
    );
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: Attributes?.QueueArn }));
    // A subscription to a queue that does not exist: delivery fails, the publish does not.
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: "sqs",
        Endpoint: "arn:aws:sqs:us-east-1:000000000000:ghost",
      }),
    );
    const publish = (id: string) =>
      sns.send(
        new PublishCommand({
          TopicArn,
          Message: id,
          MessageAttributes: { event_id: { DataType: "String", StringValue: id } },
        }),
      );
    for (const id of ["a", "b", "c", "a"]) await publish(id);
    expect(deliveryErrors).toHaveLength(4);
    expect(deliveryErrors[0]).toMatch(/QueueDoesNotExist/);
    expect(await stats.topic(TopicArn ?? "")).toEqual({
      published: 4,
      delivered: 4,
      deliveryFailures: 4,
      withEventId: 4,
      distinctEventIds: 2,
      republished: 2,
      eventIdsTruncated: true,
    });
    const before = await stats.get();
    await stats.reset();
    const after = await stats.get();
    expect(after.topics).toEqual({});
    expect(Date.parse(after.since)).toBeGreaterThanOrEqual(Date.parse(before.since));
    await publish("a");
    expect(await stats.topic(TopicArn ?? "")).toMatchObject({ published: 1, distinctEventIds: 1 });
  } finally {
    sns.destroy();
    sqs.destroy();
  }
});
