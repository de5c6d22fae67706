import { PublishBatchCommand, PublishCommand } from "@aws-sdk/client-sns";
import { bootstrapResources, statsClientFor } from "@outbox/devstack";
import { awsClients, faultClient, stack, uniqueName } from "@outbox/test-kit";
import { afterAll, describe, expect, it } from "vitest";

const stats = statsClientFor(stack());

// Only the embedded backend runs our emulator; LocalStack has no statistics endpoint.
describe.runIf(stats)("emulator publish statistics", () => {
  const client = stats as NonNullable<typeof stats>;
  const { sns } = awsClients({ sns: { maxAttempts: 1 } });
  afterAll(() => sns.destroy());

  const entry = (id: string, eventId?: string) => ({
    Id: id,
    Message: `m-${id}`,
    MessageAttributes: eventId ? { event_id: { DataType: "String", StringValue: eventId } } : undefined,
  });

  it("counts published, delivered and republished event ids per topic", async () => {
    const r = await bootstrapResources(stack().aws, { name: uniqueName("stats"), rawDelivery: true });
    expect(await client.topic(r.topicArn)).toMatchObject({ published: 0, delivered: 0 });

    await sns.send(
      new PublishBatchCommand({
        TopicArn: r.topicArn,
        PublishBatchRequestEntries: [entry("a", "e1"), entry("b", "e2"), entry("c", "e3")],
      }),
    );
    // e2 again (a relay retrying a batch), plus one message without an event id.
    await sns.send(
      new PublishCommand({
        TopicArn: r.topicArn,
        Message: "again",
        MessageAttributes: { event_id: { DataType: "String", StringValue: "e2" } },
      }),
    );
    await sns.send(new PublishCommand({ TopicArn: r.topicArn, Message: "anonymous" }));

    expect(await client.topic(r.topicArn)).toEqual({
      published: 5,
      delivered: 5,
      deliveryFailures: 0,
      withEventId: 4,
      distinctEventIds: 3,
      republished: 1,
      eventIdsTruncated: false,
    });
    const all = await client.get();
    expect(all.eventIdAttribute).toBe("event_id");
    expect(Date.parse(all.since)).not.toBeNaN();
  });

  it("does not count entries failed by a fault, and counts topics without subscribers", async () => {
    const faults = faultClient();
    const r = await bootstrapResources(stack().aws, { name: uniqueName("stats-f"), rawDelivery: true });
    const lonely = await bootstrapResources(stack().aws, { name: uniqueName("stats-l") });
    await faults?.set({ topics: [r.topicArn], failBatchEntries: { attribute: "event_id", values: ["x2"] } });
    try {
      const result = await sns.send(
        new PublishBatchCommand({
          TopicArn: r.topicArn,
          PublishBatchRequestEntries: [entry("1", "x1"), entry("2", "x2"), entry("3", "x3")],
        }),
      );
      expect(result.Failed?.map((f) => f.Id)).toEqual(["2"]);
    } finally {
      await faults?.clear();
    }
    expect(await client.topic(r.topicArn)).toMatchObject({ published: 2, delivered: 2, distinctEventIds: 2 });
    // Also reachable through the FaultClient drills already hold.
    expect((await faults?.statsClient.get())?.topics[r.topicArn]).toMatchObject({ published: 2 });
    expect(await client.topic(lonely.topicArn)).toMatchObject({ published: 0 });
  });
});
