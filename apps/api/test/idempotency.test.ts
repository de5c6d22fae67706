import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "./photo-database.js";
import { createMigratedTestDatabase } from "./photo-database.js";
import { errorMessage, startTestPhotoServer, type TestPhotoServer } from "./photo-server.js";

let database: DatabaseHandle;
let stub: EquipmentStub;
let api: TestPhotoServer;
/** Each POST holds its transaction this long, so repeats sent together meet inside it. */
let slowApi: TestPhotoServer;
beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_idempotency", {
    service: "api-test",
    poolMax: 8,
  }));
  stub = await startEquipmentStub();
  api = await startTestPhotoServer(database, stub);
  slowApi = await startTestPhotoServer(database, stub, { commitDelayMs: 500 });
});
afterEach(() => stub.clearFault());
afterAll(async () => {
  await api.server.stop(Deadline.after(5_000));
  await slowApi.server.stop(Deadline.after(5_000));
  await stub.close();
  await database.close(5_000);
});

let keys = 0;
const newKey = () => `test-key-${process.pid}-${++keys}`;

async function post(server: TestPhotoServer, key: string, body: unknown) {
  const response = await fetch(`${server.baseUrl}/photos`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    replayed: response.headers.get("idempotent-replayed"),
    body: (await response.json()) as Record<string, unknown>,
  };
}

/** Photos and photo.posted events written under `key`. */
async function writtenUnder(key: string): Promise<{ photos: number; events: number }> {
  const photos = await database.db
    .selectFrom("photos")
    .select("id")
    .where("idempotency_key", "=", key)
    .execute();
  const ids = photos.map((photo) => photo.id);
  const events =
    ids.length === 0
      ? []
      : await database.db.selectFrom("outbox").select("id").where("ordering_key", "in", ids).execute();
  return { photos: photos.length, events: events.length };
}

describe("Idempotency-Key", () => {
  it("a repeat gets the first answer again and writes nothing", async () => {
    const key = newKey();
    const body = { title: "Harbour", gearIds: ["lens-50"] };
    const first = await post(api, key, body);
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    const repeat = await post(api, key, body);
    expect(repeat).toEqual({ status: 201, replayed: "true", body: first.body });
    expect(await writtenUnder(key)).toEqual({ photos: 1, events: 1 });
    expect(stub.received.filter((call) => call.photoId === first.body.id)).toHaveLength(1);
  });

  it("replays the answer the first request gave, not the link's state since", async () => {
    stub.setFault({ status: 503 });
    const key = newKey();
    const body = { title: "Storm", gearIds: ["body-y"] };
    const first = await post(api, key, body);
    expect(first.body.gearLink).toBe("pending");
    stub.clearFault();
    expect(await post(api, key, body)).toEqual({ status: 201, replayed: "true", body: first.body });
  });

  it("refuses a repeat with a different body with 422, and writes nothing", async () => {
    const key = newKey();
    expect((await post(api, key, { title: "One", gearIds: [] })).status).toBe(201);
    for (const other of [
      { title: "Two", gearIds: [] },
      { title: "One", gearIds: ["lens"] },
    ]) {
      const answer = await post(api, key, other);
      expect(answer.status).toBe(422);
      expect(errorMessage(answer.body)).toMatch(/Idempotency-Key was already used with a different body/);
    }
    expect(await writtenUnder(key)).toEqual({ photos: 1, events: 1 });
  });

  it("repeats sent together while the first transaction is open write one photo and one event", async () => {
    const key = newKey();
    const body = { title: "Crowd", gearIds: [] };
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(slowApi, key, body)));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    expect(answers.filter((answer) => answer.replayed === "true")).toHaveLength(4);
    expect(await writtenUnder(key)).toEqual({ photos: 1, events: 1 });
  });

  it("answers 409 to a repeat while the first request is still linking the gear", async () => {
    stub.setFault({ hang: true });
    const key = newKey();
    const body = { title: "Slow link", gearIds: ["tripod"] };
    const calls = stub.received.length;
    const first = post(api, key, body);
    // The photo is committed and its request is waiting for the equipment service.
    await expect.poll(() => stub.received.length, { timeout: 10_000 }).toBeGreaterThan(calls);
    const repeat = await post(api, key, body);
    expect(repeat.status).toBe(409);
    expect(errorMessage(repeat.body)).toMatch(/still being answered/);
    stub.clearFault();
    const answered = await first;
    expect(await post(api, key, body)).toEqual({ status: 201, replayed: "true", body: answered.body });
    expect(await writtenUnder(key)).toEqual({ photos: 1, events: 1 });
  });
});
