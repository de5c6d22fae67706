import { Deadline, REQUEST_TIMEOUT_HEADER } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { createLogger } from "@outbox/shared";
import { sql } from "kysely";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createApiMetrics,
  createEquipmentClient,
  createPhotoServer,
  type PhotoServer,
  postPhoto,
  reconcilePendingLinks,
} from "../src/index.js";
import { createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";

// The service in this process on a real database and a real equipment stub; the daemon around it
// (signals, exit codes) is tested as a process in daemon.test.ts.
const API_EQUIPMENT_TIMEOUT_MS = 10_000;
const log = createLogger({
  service: "api-test",
  version: "0",
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});
let database: DatabaseHandle;
let stub: EquipmentStub;
let server: PhotoServer;
let baseUrl: string;

const equipment = () => createEquipmentClient({ baseUrl: stub.url, timeoutMs: API_EQUIPMENT_TIMEOUT_MS });

beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_photos", {
    service: "api-test",
    poolMax: 10,
  }));
  stub = await startEquipmentStub();
  server = createPhotoServer({
    pool: database.pool,
    postPhoto: (photo, deadline) =>
      postPhoto(
        {
          pool: database.pool,
          equipment: equipment(),
          equipmentTimeoutMs: API_EQUIPMENT_TIMEOUT_MS,
          handlerTimeoutMs: 25_000,
          topic: "photos",
          commitDelayMs: 0,
        },
        photo,
        deadline,
      ),
    metrics: createApiMetrics(new Registry(), database.db),
    log,
    headersTimeoutMs: 5_000,
    handlerTimeoutMs: 25_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 65_000,
  });
  baseUrl = `http://127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
});
afterEach(() => stub.clearFault());
afterAll(async () => {
  await server.stop(Deadline.after(5_000));
  await stub.close();
  await database.close(5_000);
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/photos`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function photoCount(): Promise<number> {
  const row = await database.db
    .selectFrom("photos")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe("POST /photos", () => {
  it("commits the photo with its photo.posted event, then links the gear with an idempotency key", async () => {
    const { status, body } = await post({ title: "Sunrise", gearIds: ["lens-35", "body-x"] });
    expect(status).toBe(201);
    expect(body).toEqual({ id: expect.any(String), gearLink: "linked" });
    const id = body.id as string;
    const event = await database.db
      .selectFrom("outbox")
      .select(["event_type", "ordering_key", "payload", "topic"])
      .where("ordering_key", "=", id)
      .executeTakeFirstOrThrow();
    expect(event).toEqual({
      event_type: "photo.posted",
      ordering_key: id,
      topic: "photos",
      payload: { photoId: id, title: "Sunrise", gearIds: ["lens-35", "body-x"] },
    });
    const call = await stub.waitForRequest((request) => request.photoId === id);
    expect(call.idempotencyKey).toBe(id);
    // No header from our caller: the equipment client's own 10 s is what travels downstream.
    expect(Number(call.timeoutHeader)).toBeLessThanOrEqual(API_EQUIPMENT_TIMEOUT_MS);
    expect(Number(call.timeoutHeader)).toBeGreaterThan(API_EQUIPMENT_TIMEOUT_MS / 2);
    expect(stub.linkedPhotos().get(id)).toEqual(["lens-35", "body-x"]);

    const photo = await fetch(`${baseUrl}/photos/${id}`);
    expect(await photo.json()).toMatchObject({ id, title: "Sunrise", gearLink: "linked" });
  });

  it("rejects an invalid body with 400 and writes nothing", async () => {
    const before = await photoCount();
    expect((await post({ title: "", gearIds: "lens" })).status).toBe(400);
    expect(await photoCount()).toBe(before);
  });

  it("answers 404 for an unknown or malformed photo id", async () => {
    expect((await fetch(`${baseUrl}/photos/0190c2a4-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await fetch(`${baseUrl}/photos/not-a-uuid`)).status).toBe(404);
  });
});

describe("deadline propagation", () => {
  it("answers 504 without any work when the caller's time is already spent", async () => {
    const before = { photos: await photoCount(), calls: stub.received.length };
    for (const spent of ["0", "-5"]) {
      const response = await post({ title: "late", gearIds: ["g"] }, { [REQUEST_TIMEOUT_HEADER]: spent });
      expect(response.status).toBe(504);
    }
    expect(await photoCount()).toBe(before.photos);
    expect(stub.received.length).toBe(before.calls);
  });

  it("ignores a malformed header (the cap applies), never answering 400", async () => {
    for (const malformed of ["soon", "-0", "1e3", "12.5", "99999999999999999999"]) {
      const { status, body } = await post(
        { title: `header ${malformed}`, gearIds: ["g"] },
        { [REQUEST_TIMEOUT_HEADER]: malformed },
      );
      expect(status).toBe(201);
      expect(body.gearLink).toBe("linked");
    }
  });

  it("sends the caller's remaining time downstream and gives up with it, leaving the link pending", async () => {
    stub.setFault({ hang: true });
    const { status, body } = await post(
      { title: "Dusk", gearIds: ["tripod"] },
      { [REQUEST_TIMEOUT_HEADER]: "1500" },
    );
    expect(status).toBe(201);
    expect(body.gearLink).toBe("pending");
    const call = await stub.waitForRequest((request) => request.photoId === body.id);
    expect(Number(call.timeoutHeader)).toBeLessThanOrEqual(1_500);
    expect(Number(call.timeoutHeader)).toBeGreaterThan(0);
    expect(stub.linkedPhotos().has(body.id as string)).toBe(false);
  });
});

describe("reconciliation", () => {
  it("retries pending links with backoff until linked, and never links one twice", async () => {
    stub.setFault({ status: 503 });
    const { body } = await post({ title: "Fog", gearIds: ["filter-nd"] });
    expect(body.gearLink).toBe("pending");
    const id = body.id as string;
    const options = {
      db: database.db,
      equipment: equipment(),
      batchSize: 10,
      leaseMs: 20_000,
      backoff: { baseMs: 60_000, maxMs: 60_000 },
      log,
    };
    const makeDue = () =>
      sql`UPDATE photo_gear_links SET next_attempt_at = now() WHERE photo_id = ${id}`.execute(database.db);

    // The request's own attempt owns the link for the equipment timeout: not due yet.
    expect((await reconcilePendingLinks(options)).attempted).toBe(0);
    await makeDue();
    expect(await reconcilePendingLinks(options)).toEqual({ attempted: 1, linked: 0, failed: 1 });
    const afterFailure = await database.db
      .selectFrom("photo_gear_links")
      .select([
        "state",
        "attempts",
        "last_error",
        sql<boolean>`next_attempt_at > now() + interval '20 seconds'`.as("backedOff"),
      ])
      .where("photo_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(afterFailure).toEqual({ state: "pending", attempts: 1, last_error: "HTTP 503", backedOff: true });
    // Backing off: a pass now leaves it alone.
    expect((await reconcilePendingLinks(options)).attempted).toBe(0);

    stub.clearFault();
    await makeDue();
    expect(await reconcilePendingLinks(options)).toEqual({ attempted: 1, linked: 1, failed: 0 });
    expect((await (await fetch(`${baseUrl}/photos/${id}`)).json()) as object).toMatchObject({
      gearLink: "linked",
    });
    expect((await reconcilePendingLinks(options)).attempted).toBe(0);

    // A retry the service already holds (e.g. our update was lost) is recognised, not linked again.
    const repeatsBefore = stub.repeats;
    expect(await equipment().link({ photoId: id, gearIds: ["filter-nd"] })).toEqual({ linked: true });
    expect(stub.repeats).toBe(repeatsBefore + 1);
    expect([...stub.linkedPhotos().keys()].filter((key) => key === id)).toHaveLength(1);
  });
});
