import { randomUUID } from "node:crypto";
import type { Message } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { Capacity } from "../src/capacity.js";
import { decodeMessage } from "../src/decode-message.js";
import { PoisonReason } from "../src/errors.js";
import { envelopeBody } from "./harness.js";

const id = randomUUID();

function raw(body: string, attributes: Record<string, [string, string]> = {}): Message {
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
      raw('{"name":"x"}', {
        event_id: ["String", id.toUpperCase()],
        event_type: ["String", "example.created"],
        traceparent: ["String", "00-1-2-01"],
        size: ["Number", "3"],
      }),
    );
    expect(decoded).toEqual({
      eventId: id,
      eventType: "example.created",
      payload: { name: "x" },
      headers: { traceparent: "00-1-2-01" },
    });
  });

  it("reads an SNS envelope: payload from Message, attributes from the envelope", () => {
    const body = envelopeBody({
      id,
      type: "example.created",
      payload: [1, 2],
      headers: { traceparent: "t" },
    });
    expect(decodeMessage({ MessageId: "m-2", Body: body })).toEqual({
      eventId: id,
      eventType: "example.created",
      payload: [1, 2],
      headers: { traceparent: "t" },
    });
  });

  it.each([
    ["body_not_json", raw("nope", { event_id: ["String", id], event_type: ["String", "t"] })],
    ["body_not_json", { MessageId: "m" } satisfies Message],
    ["missing_event_id", raw("{}", { event_type: ["String", "t"] })],
    ["missing_event_id", raw("{}", { event_id: ["String", ""], event_type: ["String", "t"] })],
    ["missing_event_type", raw("{}", { event_id: ["String", id] })],
    ["wrong_attribute_type", raw("{}", { event_id: ["Binary", id], event_type: ["String", "t"] })],
    [
      "invalid_event_id",
      raw("{}", { event_id: ["String", "1; DROP TABLE inbox"], event_type: ["String", "t"] }),
    ],
    ["envelope_message_not_json", { MessageId: "m", Body: envelopeBody({ id, type: "t", payload: 1 }, "{") }],
  ])("says %s", (kind, message) => {
    const decoded = decodeMessage(message);
    expect(decoded).toBeInstanceOf(PoisonReason);
    expect((decoded as PoisonReason).kind).toBe(kind);
  });
});

describe("Capacity", () => {
  it("reserves only free slots, waits for the minimum, and wakes waiters in order", async () => {
    const capacity = new Capacity(10);
    const never = new AbortController().signal;
    expect(await capacity.reserve(1, 10, never)).toBe(10);
    const first = capacity.reserve(5, 10, never);
    const second = capacity.reserve(1, 10, never);
    capacity.release(3);
    capacity.release(4);
    expect(await first).toBe(7);
    capacity.release(2);
    expect(await second).toBe(2);
  });

  it("gives up waiting with 0 when intake stops", async () => {
    const capacity = new Capacity(1);
    const stop = new AbortController();
    expect(await capacity.reserve(1, 10, stop.signal)).toBe(1);
    const waiting = capacity.reserve(1, 10, stop.signal);
    stop.abort();
    expect(await waiting).toBe(0);
  });
});
