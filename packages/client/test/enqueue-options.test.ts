import { describe, expect, it } from "vitest";
import { type EnqueueOptions, enqueueWith, type NewOutboxRow, OutboxValidationError } from "../src/index.js";

const ID = "01890a5d-ac96-774b-bcce-b302099a8057";
const EVENT_TYPE = "thing.happened";
/** `event_id` (8 + "String" + 36) and `event_type` (10 + "String" + 14): what every event carries. */
const ATTRIBUTE_BYTES = 8 + 6 + 36 + 10 + 6 + EVENT_TYPE.length;

/** An event on `topic` whose SNS message is exactly `bytes` long. */
function eventOf(topic: string, bytes: number) {
  const payloadJson = JSON.stringify("x".repeat(bytes - ATTRIBUTE_BYTES - 2));
  return { id: ID, topic, eventType: EVENT_TYPE, payloadJson };
}

/** Runs `enqueueWith`, returning the rows it asked to write (none when it threw before writing). */
async function enqueued(
  events: ReturnType<typeof eventOf>[],
  options?: EnqueueOptions,
): Promise<{ ids?: string[]; error?: unknown; written: NewOutboxRow[] }> {
  const written: NewOutboxRow[] = [];
  const outcome = await enqueueWith(
    events,
    async (rows) => {
      written.push(...rows);
    },
    options,
  ).then(
    (ids) => ({ ids }),
    (error: unknown) => ({ error }),
  );
  return { ...outcome, written };
}

describe("enqueue options: maxMessageBytes", () => {
  it("keeps SNS's default 262 144 bytes when not given, to the byte", async () => {
    expect((await enqueued([eventOf("orders", 262_144)])).written).toHaveLength(1);
    const over = await enqueued([eventOf("orders", 262_145)]);
    expect(over.written).toEqual([]);
    expect(over.error).toBeInstanceOf(OutboxValidationError);
    expect(String(over.error)).toContain("message would be 262145 bytes");
    expect(String(over.error)).toContain("over the 262144-byte SNS limit");
  });

  it("takes one number for every topic", async () => {
    const ok = await enqueued([eventOf("orders", 900 * 1024)], { maxMessageBytes: 1_048_576 });
    expect(ok.ids).toEqual([ID]);
    expect(ok.written[0]?.payload).toBe(eventOf("orders", 900 * 1024).payloadJson);
    const lowered = await enqueued([eventOf("orders", 2_049)], { maxMessageBytes: 2_048 });
    expect(String(lowered.error)).toContain("over the 2048-byte SNS limit");
  });

  it("takes a limit per logical topic, the default for topics it does not name", async () => {
    const options = { maxMessageBytes: { media: 1_048_576 } };
    expect((await enqueued([eventOf("media", 1_048_576)], options)).written).toHaveLength(1);
    const refused = await enqueued([eventOf("media", 300_000), eventOf("orders", 300_000)], options);
    // One event over its topic's limit refuses the call: nothing is written.
    expect(refused.written).toEqual([]);
    expect(refused.error).toMatchObject({ index: 1 });
    expect(String(refused.error)).toContain("over the 262144-byte SNS limit");
    expect(String((await enqueued([eventOf("media", 1_048_577)], options)).error)).toContain(
      "over the 1048576-byte SNS limit",
    );
  });

  it("refuses a limit no SNS topic can have, before looking at any event", async () => {
    const cases: [EnqueueOptions["maxMessageBytes"], string][] = [
      [1_023, "maxMessageBytes must be an integer from 1024 to 1048576"],
      [1_048_577, "got 1048577"],
      [4096.5, "got 4096.5"],
      [{ media: 2_000_000 }, 'maxMessageBytes["media"] must be an integer from 1024 to 1048576'],
    ];
    for (const [maxMessageBytes, message] of cases) {
      for (const events of [[], [eventOf("media", 2_000)]]) {
        const outcome = await enqueued(events, { maxMessageBytes });
        expect(outcome.error).toBeInstanceOf(RangeError);
        expect(String(outcome.error)).toContain(message);
        expect(outcome.written).toEqual([]);
      }
    }
  });
});
