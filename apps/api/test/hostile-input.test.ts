import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "./photo-database.js";
import { createMigratedTestDatabase } from "./photo-database.js";
import { errorMessage, startTestPhotoServer, type TestPhotoServer } from "./photo-server.js";

let database: DatabaseHandle;
let stub: EquipmentStub;
let api: TestPhotoServer;
beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_hostile", {
    service: "api-test",
    poolMax: 4,
  }));
  stub = await startEquipmentStub();
  api = await startTestPhotoServer(database, stub);
});
afterAll(async () => {
  await api.server.stop(Deadline.after(5_000));
  await stub.close();
  await database.close(5_000);
});

async function send(
  path: string,
  init: { method?: string; contentType?: string | null; body?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = {};
  if (init.contentType !== null) headers["content-type"] = init.contentType ?? "application/json";
  const response = await fetch(`${api.baseUrl}${path}`, {
    method: init.method ?? "POST",
    headers,
    ...(init.body !== undefined && { body: init.body }),
  });
  return { status: response.status, body: await response.json() };
}

async function counts(): Promise<{ photos: number; events: number }> {
  const [photos, events] = await Promise.all(
    (["photos", "outbox"] as const).map(async (table) => {
      const row = await database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }),
  );
  return { photos: photos ?? 0, events: events ?? 0 };
}

describe("text Postgres cannot store is a 400, never a 500", () => {
  it.each([
    ["a NUL in the title", '{"title":"a\\u0000b"}', /title must not contain a NUL character/],
    ["a NUL in a gear id", '{"title":"ok","gearIds":["lens\\u0000"]}', /each gear id must not contain a NUL/],
    [
      "a lone surrogate in the title",
      '{"title":"\\ud83d"}',
      /title must be well-formed Unicode: it contains a lone surrogate/,
    ],
    [
      "a lone low surrogate in a gear id",
      '{"title":"ok","gearIds":["\\udc00x"]}',
      /each gear id must be well-formed/,
    ],
  ])("%s: 400 with what was wrong, nothing written", async (_case, body, message) => {
    const before = await counts();
    const answer = await send("/photos", { body });
    expect(answer.status).toBe(400);
    expect(errorMessage(answer.body)).toMatch(message);
    expect(await counts()).toEqual(before);
  });

  it("stores a surrogate pair (an emoji) the same in the photo and its event", async () => {
    const answer = await send("/photos", { body: '{"title":"\\ud83d\\udcf7 night"}' });
    expect(answer.status).toBe(201);
    const id = (answer.body as { id: string }).id;
    const photo = await database.db
      .selectFrom("photos")
      .select("title")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const event = await database.db
      .selectFrom("outbox")
      .select(sql<string>`payload->>'title'`.as("title"))
      .where("ordering_key", "=", id)
      .executeTakeFirstOrThrow();
    expect(photo.title).toBe("📷 night");
    expect(event.title).toBe("📷 night");
  });
});

describe("one error shape, one status per cause", () => {
  const causes: [string, string, Parameters<typeof send>[1], number, RegExp][] = [
    ["an unknown route", "/nope", {}, 404, /^no such route/],
    ["an unknown method on a known path", "/photos", { method: "DELETE" }, 404, /^no such route/],
    ["an over-long photo id", `/photos/${"a".repeat(500)}`, { method: "GET" }, 404, /^no such photo$/],
    ["a malformed photo id", "/photos/not-a-uuid", { method: "GET" }, 404, /^no such photo$/],
    [
      "a path that is not valid percent-encoding",
      "/photos/%E0%A4%A",
      { method: "GET" },
      400,
      /percent-encoding/,
    ],
    [
      "text/plain",
      "/photos",
      { contentType: "text/plain", body: '{"title":"x"}' },
      415,
      /^Content-Type must be application\/json, not text\/plain/,
    ],
    [
      "another media type",
      "/photos",
      { contentType: "application/xml", body: "<x/>" },
      415,
      /not application\/xml/,
    ],
    [
      "a body without a media type",
      "/photos",
      { contentType: null, body: '{"title":"x"}' },
      415,
      /^Content-Type must be application\/json/,
    ],
    ["an empty JSON body", "/photos", { body: "" }, 400, /^the body is empty/],
    ["a body that is not JSON", "/photos", { body: '{"title":' }, 400, /^the body is not valid JSON/],
    [
      "a __proto__ key",
      "/photos",
      { body: '{"title":"x","__proto__":{"admin":true}}' },
      400,
      /must not contain a "__proto__" key/,
    ],
    [
      "a constructor.prototype key",
      "/photos",
      { body: '{"title":"x","constructor":{"prototype":{}}}' },
      400,
      /"constructor" key holding a "prototype"/,
    ],
    ["a JSON body of the wrong shape", "/photos", { body: '["x"]' }, 400, /expected object/],
    ["a missing title", "/photos", { body: "{}" }, 400, /title/],
    ["a malformed Idempotency-Key", "/photos", { body: '{"title":"x"}' }, 400, /Idempotency-Key/],
  ];

  it.each(causes)("%s: %#", async (cause, path, init, status, message) => {
    const before = await counts();
    const answer =
      cause === "a malformed Idempotency-Key"
        ? await fetch(`${api.baseUrl}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": "has spaces in it" },
            body: init?.body ?? "",
          }).then(async (response) => ({ status: response.status, body: await response.json() }))
        : await send(path, init);
    expect({ cause, status: answer.status }).toEqual({ cause, status });
    expect(errorMessage(answer.body)).toMatch(message);
    expect(await counts()).toEqual(before);
  });

  it("accepts application/json with a charset", async () => {
    const answer = await send("/photos", {
      contentType: "application/json; charset=utf-8",
      body: '{"title":"x"}',
    });
    expect(answer.status).toBe(201);
  });
});
