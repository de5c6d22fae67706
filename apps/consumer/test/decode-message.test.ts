import { randomUUID } from "node:crypto";
import type { Message } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { PoisonReason } from "../src/errors.js";
import { decodeMessage } from "../src/message/decode.js";
import { messageDelivery } from "../src/message/delivery.js";
import { ENVELOPE_TOPIC_ARN, envelopeBody } from "./harness.js";

const id = randomUUID();
const raw = messageDelivery("raw", []);
const envelope = messageDelivery("envelope", [ENVELOPE_TOPIC_ARN]);

function rawMessage(body: string, attributes: Record<string, [string, string]> = {}): Message {
  return {
    MessageId: "m-1",
    Body: body,
    MessageAttributes: Object.fromEntries(
      Object.entries(attributes).map(([name, [type, value]]) => [
        name,
        { DataType: type, StringValue: value },
      ]),
    ),
  };
}

describe("decodeMessage", () => {
  it("reads a raw delivery: payload from the body, id and type from attributes, the rest as headers", () => {
    const decoded = decodeMessage(
      rawMessage('{"name":"x"}', {
        event_id: ["String", id.toUpperCase()],
        event_type: ["String", "example.created"],
        traceparent: ["String", "00-1-2-01"],
        size: ["Number", "3"],
      }),
      raw,
    );
    expect(decoded).toEqual({
      eventId: id,
      eventType: "example.created",
      payload: { name: "x" },
      headers: { traceparent: "00-1-2-01" },
    });
  });

  it("with envelope delivery reads an SNS envelope of an allowed topic: payload from Message, attributes from the envelope", () => {
    const body = envelopeBody({
      id,
      type: "example.created",
      payload: [1, 2],
      headers: { traceparent: "t" },
    });
    expect(decodeMessage({ MessageId: "m-2", Body: body }, envelope)).toEqual({
      eventId: id,
      eventType: "example.created",
      payload: [1, 2],
      headers: { traceparent: "t" },
    });
  });

  it("with raw delivery never unwraps a body, however much it looks like an envelope", () => {
    const claimed = envelopeBody({ id: randomUUID(), type: "example.created", payload: { name: "claimed" } });
    const decoded = decodeMessage(
      rawMessage(claimed, { event_id: ["String", id], event_type: ["String", "example.created"] }),
      raw,
    );
    expect(decoded).toMatchObject({ eventId: id, eventType: "example.created", headers: {} });
    expect((decoded as { payload: unknown }).payload).toEqual(JSON.parse(claimed));
    const unattributed = decodeMessage({ MessageId: "m-3", Body: claimed }, raw);
    expect(unattributed).toBeInstanceOf(PoisonReason);
    expect((unattributed as PoisonReason).kind).toBe("missing_event_id");
    expect((unattributed as PoisonReason).detail).toMatch(/the body is an SNS notification/);
  });

  it("with envelope delivery lets the SQS attributes win over the body when they carry an event id", () => {
    const claimed = envelopeBody({ id: randomUUID(), type: "other.type", payload: 1 });
    const decoded = decodeMessage(
      rawMessage(claimed, { event_id: ["String", id], event_type: ["String", "example.created"] }),
      envelope,
    );
    expect(decoded).toMatchObject({
      eventId: id,
      eventType: "example.created",
      payload: JSON.parse(claimed),
    });
  });

  it.each([
    ["body_not_json", rawMessage("nope", { event_id: ["String", id], event_type: ["String", "t"] })],
    ["body_not_json", { MessageId: "m" } satisfies Message],
    ["missing_event_id", rawMessage("{}", { event_type: ["String", "t"] })],
    ["missing_event_id", rawMessage("{}", { event_id: ["String", ""], event_type: ["String", "t"] })],
    ["missing_event_type", rawMessage("{}", { event_id: ["String", id] })],
    ["wrong_attribute_type", rawMessage("{}", { event_id: ["Binary", id], event_type: ["String", "t"] })],
    [
      "invalid_event_id",
      rawMessage("{}", { event_id: ["String", "1; DROP TABLE inbox"], event_type: ["String", "t"] }),
    ],
  ])("says %s", (kind, message) => {
    const decoded = decodeMessage(message, raw);
    expect(decoded).toBeInstanceOf(PoisonReason);
    expect((decoded as PoisonReason).kind).toBe(kind);
  });

  it("says why a body is not JSON without quoting it: the body is the application's data", () => {
    const attributes: Record<string, [string, string]> = {
      event_id: ["String", id],
      event_type: ["String", "t"],
    };
    for (const body of ["alice@example.com", `${"x".repeat(40)} alice@example.com ${"y".repeat(40)}`]) {
      const decoded = decodeMessage(rawMessage(body, attributes), raw);
      expect(decoded).toBeInstanceOf(PoisonReason);
      expect(String(decoded)).toBe("body_not_json: not valid JSON");
    }
    const inEnvelope = decodeMessage(
      { MessageId: "m", Body: envelopeBody({ id, type: "t", payload: 1 }, "alice@example.com") },
      envelope,
    );
    expect(String(inEnvelope)).toBe("envelope_message_not_json: not valid JSON");
    // A position says where without saying what, in our words on every Node (24's V8 adds a line
    // and column to 22's message).
    expect(String(decodeMessage(rawMessage('{"email":"alice@example.com"', attributes), raw))).toBe(
      "body_not_json: not valid JSON at position 28",
    );
  });

  const notification = JSON.parse(envelopeBody({ id, type: "t", payload: 1 })) as Record<string, unknown>;
  const withEnvelope = (changes: Record<string, unknown>): Message => ({
    MessageId: "m",
    Body: JSON.stringify({ ...notification, ...changes }),
  });
  it.each([
    ["envelope_message_not_json", { MessageId: "m", Body: envelopeBody({ id, type: "t", payload: 1 }, "{") }],
    ["not_an_envelope", { MessageId: "m", Body: '{"name":"x"}' }],
    ["not_an_envelope", { MessageId: "m", Body: "[1]" }],
    ["not_an_envelope", withEnvelope({ Type: "SubscriptionConfirmation" })],
    ["not_an_envelope", withEnvelope({ MessageId: undefined })],
    ["not_an_envelope", withEnvelope({ Message: { name: "x" } })],
    ["not_an_envelope", withEnvelope({ Timestamp: 1 })],
    ["not_an_envelope", withEnvelope({ MessageAttributes: { event_id: { Type: "String" } } })],
    ["topic_not_allowed", withEnvelope({ TopicArn: "arn:aws:sns:us-east-1:111111111111:elsewhere" })],
  ])("with envelope delivery says %s", (kind, message) => {
    const decoded = decodeMessage(message, envelope);
    expect(decoded).toBeInstanceOf(PoisonReason);
    expect((decoded as PoisonReason).kind).toBe(kind);
  });
});

describe("decodeMessage: claim-checked messages", () => {
  const pointer =
    '["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"claims","s3Key":"k/1"}]';
  const identity: Record<string, [string, string]> = {
    event_id: ["String", id],
    event_type: ["String", "example.created"],
  };

  it("takes the pointer of a message marked ExtendedPayloadSize, String (our relay) or Number (the extended clients), and keeps the marker out of the headers", () => {
    for (const type of ["String", "Number"]) {
      const decoded = decodeMessage(
        rawMessage(pointer, { ...identity, ExtendedPayloadSize: [type, "300000"] }),
        raw,
      );
      expect(decoded).toMatchObject({
        claimed: { bucket: "claims", key: "k/1" },
        claimedBytes: 300_000,
        headers: {},
      });
    }
  });

  it("calls a marker that is not a byte count poison: the fetch is bounded by it", () => {
    for (const size of ["", "-1", "1e9", "12.5", "9999999999999999"]) {
      const decoded = decodeMessage(
        rawMessage(pointer, { ...identity, ExtendedPayloadSize: ["Number", size] }),
        raw,
      );
      expect(String(decoded)).toBe(
        `invalid_claim_pointer: claim-checked message, but ExtendedPayloadSize is not a byte count: "${size}"`,
      );
    }
  });

  it("reads the legacy marker SQSLargePayloadSize and the legacy pointer class", () => {
    const legacy = pointer.replace(
      "software.amazon.payloadoffloading.PayloadS3Pointer",
      "com.amazon.sqs.javamessaging.MessageS3Pointer",
    );
    const decoded = decodeMessage(
      rawMessage(legacy, { ...identity, SQSLargePayloadSize: ["Number", "300000"] }),
      raw,
    );
    expect(decoded).toMatchObject({ claimed: { bucket: "claims", key: "k/1" } });
  });

  it("leaves a message without the marker alone, even when its body looks like a pointer", () => {
    const decoded = decodeMessage(rawMessage(pointer, identity), raw);
    expect(decoded).not.toBeInstanceOf(PoisonReason);
    expect(decoded).not.toHaveProperty("claimed");
  });

  it("calls a marked message whose body is no pointer poison, saying why", () => {
    const cases: [string, string][] = [
      ['{"name":"x"}', "the body is not a [class, pointer] pair"],
      ['["com.example.Other",{"s3BucketName":"b","s3Key":"k"}]', 'unknown pointer class "com.example.Other"'],
      [
        '["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"b"}]',
        "the pointer has no s3Key string",
      ],
    ];
    for (const [body, why] of cases) {
      const decoded = decodeMessage(
        rawMessage(body, { ...identity, ExtendedPayloadSize: ["Number", "1"] }),
        raw,
      );
      expect(decoded).toBeInstanceOf(PoisonReason);
      expect(String(decoded)).toContain(`invalid_claim_pointer: claim-checked message, but ${why}`);
    }
  });
});
