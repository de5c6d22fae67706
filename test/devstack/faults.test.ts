import {
  CreateTopicCommand,
  InternalErrorException,
  ListTopicsCommand,
  PublishBatchCommand,
  PublishCommand,
} from "@aws-sdk/client-sns";
import { FaultClient, type LocalAws, snsClient, startLocalAws } from "@outbox/devstack";
import { awsClients, faultClient, uniqueName } from "@outbox/test-kit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/** Injected latency: far above what a loaded machine adds to a call, so "without it" stays well below. */
const LATENCY_MS = 1_000;

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
    // Other files' rules may be there too: look at this file's topic only.
    expect((await control.get()).topics[topicArn]).toBeUndefined();
    await control.set({ topics: [topicArn], latencyMs: 5 });
    expect((await control.get()).topics[topicArn]).toEqual({ latencyMs: 5 });
    await expect(control.set({ failureRate: 2 })).rejects.toThrow(/failureRate/);
    await expect(control.set({ topics: [], latencyMs: 5 })).rejects.toThrow(/topics must not be empty/);
    await control.clear();
    expect((await control.get()).topics[topicArn]).toBeUndefined();
  });

  it("keeps two scopes set at once apart, and clearing one leaves the other", async () => {
    // A second client, as another test file would hold, on a topic of its own.
    const other = new FaultClient(control.controlUrl);
    const otherTopic =
      (await sns.send(new CreateTopicCommand({ Name: uniqueName("faults-b") }))).TopicArn ?? "";
    const publishTo = (arn: string) => sns.send(new PublishCommand({ TopicArn: arn, Message: "m" }));
    try {
      await control.set({ topics: [topicArn], failureRate: 1, failureMode: "internal-error" });
      await other.set({ topics: [otherTopic], latencyMs: LATENCY_MS });
      // The second set did not replace the first.
      await expect(publishTo(topicArn)).rejects.toBeInstanceOf(InternalErrorException);
      let started = performance.now();
      await publishTo(otherTopic);
      expect(performance.now() - started).toBeGreaterThanOrEqual(LATENCY_MS - 10);

      // Re-setting one scope replaces that scope only.
      await control.set({ topics: [topicArn], failureRate: 1, failureMode: "throttling" });
      started = performance.now();
      await publishTo(otherTopic);
      expect(performance.now() - started).toBeGreaterThanOrEqual(LATENCY_MS - 10);

      await other.clear();
      await expect(publishTo(topicArn)).rejects.toMatchObject({ name: "Throttling" });
      started = performance.now();
      await publishTo(otherTopic);
      expect(performance.now() - started).toBeLessThan(LATENCY_MS / 2);
      const rules = await control.get();
      expect(rules.topics[topicArn]).toEqual({ failureRate: 1, failureMode: "throttling" });
      expect(rules.topics[otherTopic]).toBeUndefined();
    } finally {
      await other.clear({ topics: [otherTopic] });
    }
  });

  it("adds latency to matching calls only", async () => {
    await control.set({ topics: [topicArn], latencyMs: LATENCY_MS });
    let started = performance.now();
    await publish();
    expect(performance.now() - started).toBeGreaterThanOrEqual(LATENCY_MS - 10);
    started = performance.now();
    await sns.send(new ListTopicsCommand({}));
    expect(performance.now() - started).toBeLessThan(LATENCY_MS / 2);
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

  it("answers 200 with an empty, truncated or HTML body without executing the call", async () => {
    await expect(control.set({ okBody: "blank" as "empty" })).rejects.toThrow(
      /okBody must be one of 'empty', 'truncated', 'html'/,
    );
    const { statsClient } = control;
    // The raw answer, as a client would read it off the wire (the emulator checks no signature).
    const publishBatchRaw = () =>
      fetch(new URL("/", control.controlUrl), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          Action: "PublishBatch",
          TopicArn: topicArn,
          "PublishBatchRequestEntries.member.1.Id": "a",
          "PublishBatchRequestEntries.member.1.Message": "a",
        }),
      });
    const before = (await statsClient.topic(topicArn)).published;
    const answers: Record<string, { status: number; type: string | null; body: string }> = {};
    for (const okBody of ["empty", "truncated", "html"] as const) {
      await control.set({ topics: [topicArn], actions: ["PublishBatch"], okBody });
      const response = await publishBatchRaw();
      answers[okBody] = {
        status: response.status,
        type: response.headers.get("content-type"),
        body: await response.text(),
      };
    }
    expect(answers.empty).toEqual({ status: 200, type: "text/xml", body: "" });
    expect(answers.truncated).toMatchObject({ status: 200, type: "text/xml" });
    // The start of a PublishBatchResponse listing the entry as Successful, cut before its end.
    expect(answers.truncated?.body).toMatch(/^<PublishBatchResponse [^>]*><PublishBatchResult><Successful>/);
    expect(answers.truncated?.body).not.toMatch(/<\/PublishBatchResponse>/);
    expect(answers.html).toMatchObject({ status: 200, type: "text/html" });
    expect(answers.html?.body).toMatch(/^<!DOCTYPE html>/);
    // None was executed.
    expect((await statsClient.topic(topicArn)).published).toBe(before);

    // The real SDK: an empty body reads as a result with neither list; the others do not parse.
    await control.set({ topics: [topicArn], actions: ["PublishBatch"], okBody: "empty" });
    const batch = () =>
      sns.send(
        new PublishBatchCommand({
          TopicArn: topicArn,
          PublishBatchRequestEntries: [{ Id: "a", Message: "a" }],
        }),
      );
    const empty = await batch();
    expect(empty.Successful).toBeUndefined();
    expect(empty.Failed).toBeUndefined();
    await control.set({ topics: [topicArn], actions: ["PublishBatch"], okBody: "html" });
    await expect(batch()).rejects.toMatchObject({ $metadata: { httpStatusCode: 200 } });
    // Other actions on the topic are left alone by a rule limited to PublishBatch.
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

// A global rule reaches every topic of the emulator, so these run on a private one: on the
// run's shared emulator they would fail the other test files' publishes.
describe("fault rule scopes on a private emulator", () => {
  let local: LocalAws;
  let control: FaultClient;
  let sns: ReturnType<typeof snsClient>;
  let scoped = "";
  let unscoped = "";

  beforeAll(async () => {
    local = await startLocalAws();
    control = new FaultClient(local.sns.faultControlUrl);
    sns = snsClient(local.aws, { maxAttempts: 1 });
    const createTopic = async (name: string) =>
      (await sns.send(new CreateTopicCommand({ Name: name }))).TopicArn ?? "";
    [scoped, unscoped] = await Promise.all([createTopic("scoped"), createTopic("unscoped")]);
  });
  afterEach(() => control.clear({ all: true }));
  afterAll(async () => {
    sns.destroy();
    await local.stop();
  });

  const publishTo = (arn: string) => sns.send(new PublishCommand({ TopicArn: arn, Message: "m" }));
  const failsWith = (arn: string) =>
    publishTo(arn).then(
      () => "ok",
      (error: { name: string }) => error.name,
    );

  it("gives a topic its own rule where it has one, the global rule elsewhere", async () => {
    await control.set({ failureRate: 1, failureMode: "internal-error" });
    await control.set({ topics: [scoped], actions: ["PublishBatch"], failureRate: 1 });
    expect(await control.get()).toEqual({
      global: { failureRate: 1, failureMode: "internal-error" },
      topics: { [scoped]: { actions: ["PublishBatch"], failureRate: 1 } },
    });
    // The topic's rule wins whole: it spares Publish, although the global rule would fail it.
    expect(await failsWith(scoped)).toBe("ok");
    expect(await failsWith(unscoped)).toBe("InternalErrorException");
    // Calls without a topic get the global rule.
    await expect(sns.send(new ListTopicsCommand({}))).rejects.toBeInstanceOf(InternalErrorException);

    // Without its own rule the topic falls back to the global one…
    await control.clear({ topics: [scoped] });
    expect(await failsWith(scoped)).toBe("InternalErrorException");
    // …and clearing the global rule leaves the topic rules.
    await control.set({ topics: [scoped], failureRate: 1, failureMode: "throttling" });
    await control.clear({ global: true });
    expect(await control.get()).toEqual({
      topics: { [scoped]: { failureRate: 1, failureMode: "throttling" } },
    });
    expect(await failsWith(scoped)).toBe("Throttling");
    expect(await failsWith(unscoped)).toBe("ok");
  });

  it("clears only the scopes the client set, unless told to clear them all", async () => {
    const other = new FaultClient(local.sns.faultControlUrl);
    await control.set({ latencyMs: 1 });
    await other.set({ topics: [unscoped], latencyMs: 2 });
    await control.set({ topics: [scoped], latencyMs: 3 });
    await other.clear();
    expect(await control.get()).toEqual({ global: { latencyMs: 1 }, topics: { [scoped]: { latencyMs: 3 } } });
    await other.clear(); // Nothing of its own left: a no-op.
    expect(Object.keys((await control.get()).topics)).toEqual([scoped]);
    await control.clear();
    expect(await control.get()).toEqual({ topics: {} });

    await control.set({ topics: [scoped], latencyMs: 3 });
    await other.set({ topics: [unscoped], latencyMs: 2 });
    await other.clear({ all: true });
    expect(await control.get()).toEqual({ topics: {} });
  });

  it("drops the requests a rule hung only when that rule is lifted", async () => {
    await control.set({ topics: [scoped], hang: true });
    await control.set({ topics: [unscoped], hang: true });
    const scopedCall = failsWith(scoped);
    const unscopedCall = failsWith(unscoped);
    let settled = "";
    void scopedCall.then(() => {
      settled = "scoped";
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await control.clear({ topics: [unscoped] });
    expect(await unscopedCall).not.toBe("ok");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe("");
    await control.clear({ topics: [scoped] });
    expect(await scopedCall).not.toBe("ok");
    // Lifted, not resumed: a fresh call goes through.
    expect(await failsWith(scoped)).toBe("ok");
  });
});
