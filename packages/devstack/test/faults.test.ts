import {
  CreateTopicCommand,
  InternalErrorException,
  ListTopicsCommand,
  PublishBatchCommand,
  PublishCommand,
} from "@aws-sdk/client-sns";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { awsClients, faultClient } from "../../../test/support/aws.js";
import { uniqueName } from "../../../test/support/names.js";

const faults = faultClient();

// Only the embedded backend has the fault endpoint (LocalStack offers no such hook), so this
// suite is skipped on the containers backend rather than failing there.
describe.runIf(faults)("fault injection", () => {
  const control = faults as NonNullable<typeof faults>;
  const { sns } = awsClients({ sns: { maxAttempts: 1 } });
  let topicArn = "";

  beforeAll(async () => {
    topicArn = (await sns.send(new CreateTopicCommand({ Name: uniqueName("faults") }))).TopicArn ?? "";
  });
  afterEach(() => control.clear());
  afterAll(() => sns.destroy());

  const publish = (client = sns) => client.send(new PublishCommand({ TopicArn: topicArn, Message: "m" }));

  it("is off by default and round-trips through the control endpoint", async () => {
    expect(await control.get()).toEqual({});
    await control.set({ topics: [topicArn], latencyMs: 5 });
    expect(await control.get()).toEqual({ topics: [topicArn], latencyMs: 5 });
    await expect(control.set({ failureRate: 2 })).rejects.toThrow(/failureRate/);
  });

  it("adds latency to matching calls only", async () => {
    await control.set({ topics: [topicArn], latencyMs: 300 });
    let started = performance.now();
    await publish();
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    started = performance.now();
    await sns.send(new ListTopicsCommand({}));
    expect(performance.now() - started).toBeLessThan(250);
  });

  it("fails every call with InternalError at rate 1.0", async () => {
    await control.set({ topics: [topicArn], failureRate: 1, failureMode: "internal-error" });
    const error = await publish().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalErrorException);
    expect(error).toMatchObject({ $metadata: { httpStatusCode: 500, attempts: 1 } });
  });

  it("throttles in a way the SDK retries as throttling", async () => {
    await control.set({ topics: [topicArn], failureRate: 1, failureMode: "throttling" });
    const { sns: retrying } = awsClients({ sns: { maxAttempts: 2 } });
    try {
      const error = await publish(retrying).catch((e: unknown) => e);
      // The SDK classifies by name ("Throttling" is in its throttling list): it retried once.
      expect(error).toMatchObject({ name: "Throttling", $metadata: { httpStatusCode: 400, attempts: 2 } });
    } finally {
      retrying.destroy();
    }
  });

  it("hangs until the SDK's request timeout fires", async () => {
    await control.set({ topics: [topicArn], actions: ["Publish"], hang: true });
    const { sns: impatient } = awsClients({
      sns: { maxAttempts: 1, requestHandler: { requestTimeout: 300, throwOnRequestTimeout: true } },
    });
    try {
      const started = performance.now();
      const error = await publish(impatient).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "TimeoutError" });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      impatient.destroy();
    }
    await control.clear();
    await expect(publish()).resolves.toMatchObject({ MessageId: expect.any(String) });
  });

  it("fails chosen PublishBatch entries as Failed/InternalError", async () => {
    await control.set({
      topics: [topicArn],
      failBatchEntries: { attribute: "event_id", values: ["e2", "e4"] },
    });
    const result = await sns.send(
      new PublishBatchCommand({
        TopicArn: topicArn,
        PublishBatchRequestEntries: ["e1", "e2", "e3", "e4"].map((id) => ({
          Id: id,
          Message: id,
          MessageAttributes: { event_id: { DataType: "String", StringValue: id } },
        })),
      }),
    );
    expect(result.Successful?.map((s) => s.Id)).toEqual(["e1", "e3"]);
    expect(result.Failed).toEqual([
      expect.objectContaining({ Id: "e2", Code: "InternalError", SenderFault: false }),
      expect.objectContaining({ Id: "e4", Code: "InternalError", SenderFault: false }),
    ]);

    await control.set({ topics: [topicArn], batchEntryFailureRate: 1 });
    const all = await sns.send(
      new PublishBatchCommand({
        TopicArn: topicArn,
        PublishBatchRequestEntries: [{ Id: "x", Message: "x" }],
      }),
    );
    expect(all.Failed?.map((f) => f.Id)).toEqual(["x"]);
  });
});
