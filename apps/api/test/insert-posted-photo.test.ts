import type { NewOutboxRow } from "@outbox/client";
import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { insertPostedPhoto } from "../src/db/insert-posted-photo.js";
import type { Database } from "../src/db/schema.js";

// Refused before the statement runs: the transaction plays no part in the checks.
const trx = {} as Kysely<Database>;
const photo = { id: "p", title: "t", idempotency_key: null, idempotency_response: null };
const link = { gearIdsJson: "[]", state: "linked" as const, firstAttemptInMs: 0 };
const event: NewOutboxRow = {
  id: "e",
  topic: "photos",
  ordering_key: "p",
  event_type: "photo.posted",
  payload: "{}",
  headers: "{}",
};

describe("insertPostedPhoto", () => {
  it("refuses an event due later: its due time is not in the statement", async () => {
    await expect(
      insertPostedPhoto(trx, photo, link, [{ ...event, available_at: new Date(), deliver_at: new Date() }]),
    ).rejects.toThrow("one event, due at once");
  });

  it("refuses no event and more than one", async () => {
    await expect(insertPostedPhoto(trx, photo, link, [])).rejects.toThrow("one event, due at once");
    await expect(insertPostedPhoto(trx, photo, link, [event, event])).rejects.toThrow(
      "one event, due at once",
    );
  });
});
