import { enqueue, OutboxValidationError, uuidv7 } from "@outbox/client";
import { receiveAll } from "@outbox/test-kit";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { clearOutbox, countRows, useRelayTestBed } from "./harness.js";

const bed = useRelayTestBed("payload", { defaults: { pollIntervalMs: 200 } });

/** SNS's limit, restated here rather than imported: the test checks the code's arithmetic. */
const SNS_LIMIT = 262_144;
const eventType = "payload.measured";
const traceparent = `00-${"1".repeat(32)}-${"2".repeat(16)}-01`;

/** What SNS counts for the attributes the relay adds: name + data type ("String") + value, per attribute. */
function attributeBytes(id: string): number {
  return [
    ["event_id", id],
    ["event_type", eventType],
    ["traceparent", traceparent],
  ].reduce((sum, [name = "", value = ""]) => sum + Buffer.byteLength(`${name}String${value}`), 0);
}

/**
 * A payload whose JSON.stringify is exactly `bytes` long, made of many small nested objects whose keys
 * run in descending order: jsonb would add a space after every `:` and `,` and sort the keys.
 */
function payloadOf(bytes: number): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  let length = 2 + Buffer.byteLength('"pad":""'); // {} and the padding entry
  for (let i = 99_999; length < bytes - 64; i--) {
    const value = { z: i % 7, a: [i % 3, { y: true }] };
    payload[`k${i}`] = value;
    length += Buffer.byteLength(`"k${i}":${JSON.stringify(value)},`);
  }
  payload.pad = "x".repeat(bytes - length);
  expect(Buffer.byteLength(JSON.stringify(payload))).toBe(bytes);
  return payload;
}

describe("payload fidelity: the message published is the text enqueued", () => {
  it("publishes a payload right at the limit that jsonb's text form would have pushed over it, byte for byte", async () => {
    await clearOutbox(bed.handle);
    const id = uuidv7();
    const payload = payloadOf(SNS_LIMIT - attributeBytes(id));
    const json = JSON.stringify(payload);
    // The case is the one from the issue: as jsonb::text the same payload no longer fits.
    const { rows } = await sql<{ bytes: number }>`SELECT octet_length(${json}::jsonb::text) AS bytes`.execute(
      bed.handle.db,
    );
    expect((rows[0]?.bytes ?? 0) + attributeBytes(id)).toBeGreaterThan(SNS_LIMIT * 1.1);

    await enqueue(bed.handle.db, [{ id, topic: "orders", eventType, payload, headers: { traceparent } }]);
    const relay = bed.start();
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 1);
    expect(await bed.stop(relay)).toMatchObject({ published: 1, dead: 0 });
    expect(received).toHaveLength(1);
    expect(received[0]?.attributes).toEqual({ event_id: id, event_type: eventType, traceparent });
    expect(received[0]?.body === json).toBe(true); // not toEqual: a 256 KiB diff helps nobody
    expect(Object.keys(JSON.parse(received[0]?.body ?? "{}")).slice(0, 3)).toEqual([
      "k99999",
      "k99998",
      "k99997",
    ]);
    expect(await countRows(bed.handle)).toEqual({ unsent: 0, published: 1, dead: 0 });
  });

  it("refuses one byte over the limit at enqueue, naming the size and the limit, and writes nothing", async () => {
    await clearOutbox(bed.handle);
    const id = uuidv7();
    const payload = payloadOf(SNS_LIMIT - attributeBytes(id) + 1);
    const attempt = enqueue(bed.handle.db, [
      { topic: "orders", eventType, payload: {} },
      { id, topic: "orders", eventType, payload, headers: { traceparent } },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(OutboxValidationError);
    await expect(attempt).rejects.toThrow(
      `event #1: message would be ${SNS_LIMIT + 1} bytes (payload ${SNS_LIMIT - attributeBytes(id) + 1} + attributes ${attributeBytes(id)}), over the ${SNS_LIMIT}-byte SNS limit`,
    );
    expect(await countRows(bed.handle)).toEqual({ unsent: 0, published: 0, dead: 0 });
  });

  it("keeps the caller's key order, and the whitespace of a payload given as JSON text", async () => {
    await clearOutbox(bed.handle);
    const object = { zeta: 1, alpha: { mid: [3, 2, 1], aa: "two  spaces", a: null }, "": "", b: 1.5e-7 };
    const text = '{\n  "zeta" : 1,\t"alpha": {"mid":[3,2, 1] , "a" : null},\r\n  "b":"\\u00e9\\n"\n}';
    const ids = await enqueue(bed.handle.db, [
      { topic: "orders", orderingKey: "k", eventType, payload: object },
      { topic: "orders", orderingKey: "k", eventType, payloadJson: text },
      { topic: "orders", orderingKey: "k", eventType, payloadJson: " [1,2] " },
    ]);
    const relay = bed.start();
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 3);
    await bed.stop(relay);
    const bodies = new Map(received.map((message) => [message.attributes.event_id, message.body]));
    expect(ids.map((id) => bodies.get(id))).toEqual([JSON.stringify(object), text, " [1,2] "]);
  });

  it("refuses payloadJson that is not JSON, with the event's index", async () => {
    await expect(
      enqueue(bed.handle.db, [{ topic: "orders", eventType, payloadJson: "{'single': 'quotes'}" }]),
    ).rejects.toThrow(/^event #0: payloadJson is not valid JSON: /);
  });
});
