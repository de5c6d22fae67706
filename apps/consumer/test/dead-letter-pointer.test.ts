import { randomUUID } from "node:crypto";
import type { Message } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { deadLetterPointer } from "../src/cli/dead-letter-pointer.js";
import { envelopeBody } from "./harness.js";

// The redrive's look at a dead letter: which ones carry a claim-check pointer (claimCheckPointer,
// shared with the relay's republish), with raw delivery and inside an SNS notification.

const pointerBody = JSON.stringify([
  "software.amazon.payloadoffloading.PayloadS3Pointer",
  { s3BucketName: "claims", s3Key: "orders/1" },
]);
const event = { id: randomUUID(), type: "order.placed", payload: {} };

function raw(body: string, attributes: Record<string, string>): Message {
  return {
    MessageId: "m-1",
    Body: body,
    MessageAttributes: Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [name, { DataType: "Number", StringValue: value }]),
    ),
  };
}

describe("deadLetterPointer", () => {
  it("reads the pointer of a raw delivery marked by either size attribute", () => {
    expect(deadLetterPointer(raw(pointerBody, { ExtendedPayloadSize: "300000" }))).toEqual({
      bucket: "claims",
      key: "orders/1",
    });
    expect(deadLetterPointer(raw(pointerBody, { SQSLargePayloadSize: "300000" }))).toEqual({
      bucket: "claims",
      key: "orders/1",
    });
  });

  it("reads the pointer inside an SNS notification whose attributes mark it", () => {
    const body = envelopeBody({ ...event, headers: { ExtendedPayloadSize: "300000" } }, pointerBody);
    expect(deadLetterPointer({ MessageId: "m-2", Body: body })).toEqual({
      bucket: "claims",
      key: "orders/1",
    });
  });

  it("finds none without the size attribute, or when the marked body is no pointer", () => {
    expect(deadLetterPointer(raw(pointerBody, {}))).toBeUndefined();
    expect(deadLetterPointer({ MessageId: "m-3", Body: envelopeBody(event, pointerBody) })).toBeUndefined();
    expect(deadLetterPointer(raw('{"name":"x"}', { ExtendedPayloadSize: "10" }))).toBeUndefined();
    expect(deadLetterPointer(raw("not json", { ExtendedPayloadSize: "10" }))).toBeUndefined();
    const brokenEnvelope = envelopeBody({ ...event, headers: { ExtendedPayloadSize: "10" } }, '["x"]');
    expect(deadLetterPointer({ MessageId: "m-4", Body: brokenEnvelope })).toBeUndefined();
  });
});
