import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EquipmentStub, startEquipmentStub } from "../src/index.js";

let stub: EquipmentStub;
beforeAll(async () => {
  stub = await startEquipmentStub();
});
afterAll(() => stub.close());

function link(photoId: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${stub.url}/links`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": photoId, ...headers },
    body: JSON.stringify({ photoId, gearIds: ["lens"] }),
    ...(signal ? { signal } : {}),
  });
}

describe("equipment stub", () => {
  it("records a request while another one hangs: requests do not queue behind each other", async () => {
    stub.setFault({ hang: true });
    const giveUp = new AbortController();
    const hanging = link("hanging", {}, giveUp.signal).catch(() => "aborted");
    await stub.waitForRequest((request) => request.photoId === "hanging");
    // The single-threaded stub of the source document would not read this one until the first ended.
    const second = link("second", { "X-Request-Timeout-Ms": "2981" }, giveUp.signal).catch(() => "aborted");
    const recorded = await stub.waitForRequest((request) => request.photoId === "second");
    expect(recorded.timeoutHeader).toBe("2981");
    expect(stub.peakConcurrent).toBeGreaterThanOrEqual(2);
    giveUp.abort();
    expect(await Promise.all([hanging, second])).toEqual(["aborted", "aborted"]);
    // Nobody waited for them: nothing was linked.
    expect(stub.linkedPhotos().has("hanging")).toBe(false);
    stub.clearFault();
  });

  it("answers an injected status, and after clearFault links once per idempotency key", async () => {
    stub.setFault({ status: 503 });
    expect((await link("p1")).status).toBe(503);
    stub.clearFault();
    expect((await link("p1")).status).toBe(201);
    expect((await link("p1")).status).toBe(200);
    expect(stub.linkedPhotos().get("p1")).toEqual(["lens"]);
    expect(stub.repeats).toBe(1);
  });

  it("holds a delayed request until clearFault releases it", async () => {
    stub.setFault({ delayMs: 60_000 });
    const delayed = link("p2");
    await stub.waitForRequest((request) => request.photoId === "p2");
    stub.clearFault();
    expect((await delayed).status).toBe(201);
  });
});
