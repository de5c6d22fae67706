import { CreateTopicCommand, PublishCommand, SubscribeCommand } from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { StatsClient, snsClient, sqsClient, startEmbeddedSqs, startSnsEmulator } from "@outbox/devstack";
import { afterAll, beforeAll, expect, it } from "vitest";

// Reset is global, so it is tested on a private emulator rather than the run's shared one.
const region = "us-east-1";
const credentials = { accessKeyId: "test", secretAccessKey: "test" };
let stop: () => Promise<void> = async () => {};
let endpoints: { sns: string; sqs: string; stats: string };
const deliveryErrors: string[] = [];

beforeAll(async () => {
  const sqs = await startEmbeddedSqs({ region, accountId: "000000000000" });
  const sns = await startSnsEmulator({
    sqsEndpoint: sqs.endpoint,
    region,
    accountId: "000000000000",
    credentials,
    statsMaxTrackedEventIds: 2,
    onDeliveryError: (error) => deliveryErrors.push(error.message),
  });
  endpoints = { sns: sns.endpoint, sqs: sqs.endpoint, stats: sns.statsUrl };
  stop = async () => {
    await sns.stop();
    await sqs.stop();
  };
});
afterAll(() => stop());

it("resets, bounds the remembered event ids, and counts failed deliveries", async () => {
  const aws = { region, credentials, snsEndpoint: endpoints.sns, sqsEndpoint: endpoints.sqs };
  const sns = snsClient(aws);
  const sqs = sqsClient(aws);
  const stats = new StatsClient(endpoints.stats);
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
