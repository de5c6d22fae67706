import { enqueue } from "@outbox/client";
import { awsEnvironment, bootstrapResources } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import {
  createMigratedTestDatabase,
  type DaemonProcess,
  stack,
  startDaemonProcess,
  uniqueName,
  waitUntil,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsoleProcess } from "./console-stack.js";

/*
 * The sequence that broke a key's order with two routine clicks: e1 dead on key K, e2 waiting behind
 * it; skip e1 (a live relay publishes e2), then "Requeue group". Driven as an operator's browser
 * would, by the console's forms over HTTP, with a real relay publishing.
 */

let handle: DatabaseHandle;
let consoleProcess: DaemonProcess;
let relay: DaemonProcess;
let base: string;
let session: { cookie: string; token: string };

/** A form of the console's own page: its cookie, its token, its origin. */
async function post(path: string, fields: Record<string, string>): Promise<string> {
  const response = await fetch(new URL(path, base), {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: session.cookie,
      origin: new URL(base).origin,
    },
    body: new URLSearchParams({ ...fields, csrf: session.token }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return text;
}

/** The rows a requeue preview lists, as `id=fate`. */
function fates(page: string): string[] {
  return [...page.matchAll(/<tr data-id="([^"]+)" data-fate="([^"]+)">/g)].map(
    ([, id, fate]) => `${id}=${fate}`,
  );
}

async function row(id: string) {
  return handle.db
    .selectFrom("outbox")
    .select(["dead_at", "skipped_at", "published_at"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  let url: string;
  ({ url, handle } = await createMigratedTestDatabase("console_order", { service: "console-test" }));
  const queues = await bootstrapResources(stack().aws, {
    name: uniqueName("console_order"),
    fifo: false,
    rawDelivery: true,
  });
  const env = {
    ...awsEnvironment(stack().aws),
    DATABASE_URL: url,
    RELAY_TOPIC_ARNS: `orders=${queues.topicArn}`,
    CONSOLE_PORT: "0",
    LOG_LEVEL: "info",
  };
  ({ process: consoleProcess, url: base } = await startConsoleProcess(env));
  relay = startDaemonProcess("apps/relay/src/main.ts", env, { name: "relay" });
}, 180_000);

/** The page's CSRF cookie and the token its forms carry (a page with a dead row has forms). */
async function openSession(): Promise<void> {
  const response = await fetch(new URL("/dead-rows", base));
  session = {
    cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    token: /name="csrf" value="([^"]+)"/.exec(await response.text())?.[1] ?? "",
  };
}

afterAll(async () => {
  if (relay && relay.child.exitCode === null) await relay.stop("SIGTERM");
  if (consoleProcess && consoleProcess.child.exitCode === null) await consoleProcess.stop("SIGTERM");
  await handle?.close(5_000);
});

describe("the console keeps a key's order", { timeout: 120_000 }, () => {
  it("skip e1 (e2 goes out), then Requeue group: e1 is left out, refused when asked, sent after e2 only when confirmed out of order", async () => {
    const event = { topic: "orders", eventType: "order.placed", payload: {}, orderingKey: "K" };
    const [e1 = "", e2 = ""] = await enqueue(handle.db, [event, { ...event, eventType: "order.paid" }]);
    await sql`UPDATE outbox SET dead_at = now(), attempts = 5,
                last_error = 'after 5 attempts: InvalidParameter: Message too long'
              WHERE id = ${e1}`.execute(handle.db);
    await openSession();

    // Skip e1, as its row's button does: preview, then confirm.
    expect(await post("/actions/preview", { action: "skip", id: e1 })).toMatch(
      /This will skip <strong>1<\/strong>/,
    );
    await post("/actions/run", { action: "skip", ids: e1 });
    const published = await waitUntil(
      "the relay to publish e2 once e1 is skipped",
      async () => (await row(e2)).published_at,
      { alive: [relay] },
    );

    // "Requeue group": the group counts e1, but a group leaves its skipped rows out.
    const group = await post("/actions/preview", { action: "requeue", kind: "InvalidParameter" });
    expect(group).toContain('id="preview-count" data-count="0"');
    expect(fates(group)).toEqual([`${e1}=skipped`]);
    expect(group).toContain('name="skipped" value="1"');
    // Asked with the skipped rows: e1 would go out after e2, so it stays dead; e2 is named.
    const asked = await post("/actions/preview", {
      action: "requeue",
      kind: "InvalidParameter",
      skipped: "1",
    });
    expect(fates(asked)).toEqual([`${e1}=overtaken`]);
    expect(asked).toContain(`its key already sent later events while it was skipped (${e2})`);
    expect(asked).not.toContain('id="confirm"');
    expect(asked).toContain('id="confirm-out-of-order"');

    // A confirmation without the out-of-order field (an old page, a hand-made form) changes nothing.
    const refused = await post("/actions/run", { action: "requeue", ids: e1 });
    expect(refused).toContain('id="report" data-count="0"');
    expect(refused).toContain('id="overtaken"');
    expect(await row(e1)).toMatchObject({ dead_at: expect.any(Date), published_at: null });

    // Confirmed out of order: e1 goes, after e2, as the preview said.
    const accepted = await post("/actions/run", { action: "requeue", ids: e1, out_of_order: "1" });
    expect(accepted).toContain('id="report" data-count="1"');
    const late = await waitUntil("the relay to publish e1", async () => (await row(e1)).published_at, {
      alive: [relay],
    });
    expect(late.getTime()).toBeGreaterThanOrEqual(published.getTime());
    expect(consoleProcess.lines).toContainEqual(
      expect.objectContaining({ msg: "console action", action: "requeue", outOfOrder: true }),
    );
  });
});
