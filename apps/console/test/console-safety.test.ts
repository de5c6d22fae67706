import { randomUUID } from "node:crypto";
import { awsClients, configRefusal, type DaemonProcess } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleStack, seedConsoleStack, startConsoleProcess } from "./console-stack.js";

/*
 * What the console must not do to what it shows: exhaust the database's pool with republish runs,
 * start one run twice, change state on a GET another site can send, answer bad input with a 500.
 */

const ENTRY = "apps/console/src/main.ts";
const { sqs } = awsClients();
const ANA = "ana-has-a-long-password";
const BOB = "bob-has-a-long-password";

let seeded: ConsoleStack;
const started: DaemonProcess[] = [];

async function start(env: Record<string, string> = {}): Promise<{ url: string; daemon: DaemonProcess }> {
  const { process, url } = await startConsoleProcess({ ...seeded.env, ...env });
  started.push(process);
  return { url, daemon: process };
}

function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

/** The console's own form: its cookie, its token, its origin. */
async function formPoster(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(new URL("/replays", url), { headers });
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="csrf" value="([^"]+)"/.exec(await response.text())?.[1] ?? "";
  return (path: string, fields: Record<string, string>) =>
    fetch(new URL(path, url), {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie,
        origin: new URL(url).origin,
        ...headers,
      },
      body: new URLSearchParams({ csrf, ...fields }),
    });
}

/** A republish of the seeded hour at one event a second: it runs for minutes, unless stopped. */
function slowRun(key: string): Record<string, string> {
  return {
    from: new Date(Date.now() - 2 * 3_600_000).toISOString(),
    rate: "1",
    allowReapply: "on",
    request: key,
  };
}

async function runsCount(): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*)::text AS n FROM relay_republish`.execute(
    seeded.handle.db,
  );
  return Number(rows[0]?.n ?? 0);
}

beforeAll(async () => {
  seeded = await seedConsoleStack("console_safety", sqs);
}, 120_000);

afterAll(async () => {
  for (const process of started) if (process.child.exitCode === null) await process.stop("SIGTERM");
  await seeded?.handle.close(5_000);
  sqs.destroy();
});

describe("republish runs in the console", { timeout: 180_000 }, () => {
  it("more runs than CONSOLE_REPUBLISH_RUNS: the rest refused (429), every page still answers; one stops on its button", async () => {
    const { url, daemon } = await start({ CONSOLE_REPUBLISH_RUNS: "2" });
    const post = await formPoster(url);
    const before = await runsCount();
    const answers = [];
    for (let n = 0; n < 7; n += 1) answers.push(await post("/replays/run", slowRun(randomUUID())));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429, 429, 429, 429, 429]);
    expect(await answers[2]?.text()).toContain("CONSOLE_REPUBLISH_RUNS=2");
    expect(await runsCount()).toBe(before + 2);
    for (const path of ["/", "/dead-rows", "/blocked-keys", "/replays", "/dead-letters"]) {
      expect({ path, status: (await fetch(new URL(path, url))).status }).toEqual({ path, status: 200 });
    }
    const replays = await (await fetch(new URL("/replays", url))).text();
    const running = [...replays.matchAll(/action="\/replays\/stop"[\s\S]*?name="run" value="([^"]+)"/g)].map(
      (match) => match[1] ?? "",
    );
    expect(running).toHaveLength(2);
    const [first = ""] = running;
    const stopped = await post("/replays/stop", { run: first });
    expect(stopped.status).toBe(200);
    await daemon.waitForLog("republish done", { run: first, finished: false });
    // Stopped after its page: its cursor kept, not finished, and a place is free again.
    const { rows } = await sql<{ finished: boolean }>`
      SELECT finished_at IS NOT NULL AS finished FROM relay_republish WHERE id = ${first}::uuid
    `.execute(seeded.handle.db);
    expect(rows).toEqual([{ finished: false }]);
    expect((await post("/replays/run", slowRun(randomUUID()))).status).toBe(200);
    expect((await post("/replays/stop", { run: randomUUID() })).status).toBe(404);
    await daemon.stop("SIGTERM");
  });

  it("the same confirmation posted twice (a double click) starts one run", async () => {
    const { url, daemon } = await start({ CONSOLE_REPUBLISH_RUNS: "3" });
    const post = await formPoster(url);
    const before = await runsCount();
    const key = randomUUID();
    const [first, second] = await Promise.all([
      post("/replays/run", slowRun(key)),
      post("/replays/run", slowRun(key)),
    ]);
    expect([first?.status, second?.status]).toEqual([200, 200]);
    const texts = [await first.text(), await second.text()];
    expect(texts.filter((text) => text.includes("already started by this confirmation"))).toHaveLength(1);
    expect(await runsCount()).toBe(before + 1);
    // A confirmation without its key (not from a preview) starts nothing.
    const { request: _, ...keyless } = slowRun(key);
    expect((await post("/replays/run", keyless)).status).toBe(400);
    expect(await runsCount()).toBe(before + 1);
    await daemon.stop("SIGTERM");
  });
});

describe("no state change on a GET", { timeout: 120_000 }, () => {
  it("a request another site's page makes is refused (Sec-Fetch-Site); the console's own and typed ones are not", async () => {
    const { url } = await start();
    const status = async (site: string) =>
      (await fetch(new URL("/dead-letters", url), { headers: { "sec-fetch-site": site } })).status;
    expect(await status("cross-site")).toBe(403);
    expect(await status("same-site")).toBe(403);
    expect(await status("same-origin")).toBe(200);
    expect(await status("none")).toBe(200);
  });

  it("?fresh=1 walks nothing; the re-read is a POST behind the CSRF check, at most one every 10 s", async () => {
    const { url } = await start();
    const listedAt = async (path: string) =>
      /Listed at ([^:]+:[^:]+:[^:]+):/.exec(await (await fetch(new URL(path, url))).text())?.[1];
    const first = await listedAt("/dead-letters");
    expect(first).toBeDefined();
    expect(await listedAt("/dead-letters?fresh=1")).toBe(first);
    // What another site's form can send: no cookie, no token.
    const forged = await fetch(new URL("/dead-letters/read", url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(forged.status).toBe(403);
    expect(await listedAt("/dead-letters")).toBe(first);
    const post = await formPoster(url);
    const reread = await post("/dead-letters/read", {});
    expect(reread.status).toBe(303);
    expect(reread.headers.get("location")).toBe("/dead-letters");
    const second = await listedAt("/dead-letters");
    expect(second).not.toBe(first);
    const again = await post("/dead-letters/read", {});
    expect(again.status).toBe(429);
    expect(await again.text()).toContain("at most one re-read every 10 s");
    expect(await listedAt("/dead-letters")).toBe(second);
  });
});

describe("bad input is a 400 or a 413 with its reason", { timeout: 120_000 }, () => {
  it("a date that does not exist, a NUL in a filter, a malformed id, an unknown run, a body over the limit", async () => {
    const { url } = await start();
    const post = await formPoster(url);
    const impossible = await post("/replays/preview", { from: "2026-02-30T10:00:00Z", allowReapply: "on" });
    expect(impossible.status).toBe(400);
    expect(await impossible.text()).toContain("from needs a real timestamp with its zone");
    expect(
      (await post("/replays/run", { ...slowRun(randomUUID()), from: "2026-02-30T10:00:00Z" })).status,
    ).toBe(400);
    for (const path of ["/dead-rows?kind=%00", "/dead-letters?kind=%00", "/dead-rows?topic=a%00b"]) {
      const answer = await fetch(new URL(path, url));
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(await answer.text()).toContain("filter holds a control character");
    }
    const dashes = await post("/actions/preview", { action: "requeue", ids: "-".repeat(36) });
    expect(dashes.status).toBe(400);
    expect(await dashes.text()).toContain("an event id is not a UUID");
    const unknown = await post("/replays/preview", { run: randomUUID(), allowReapply: "on" });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("No such run");
    const big = await post("/actions/preview", { action: "skip", pad: "x".repeat(1_100_000) });
    expect(big.status).toBe(413);
    expect(await big.text()).toContain("Refused: Request body is too large");
    // The console still answers.
    expect((await fetch(url)).status).toBe(200);
  });
});

describe("operators from CONSOLE_USERS", { timeout: 120_000 }, () => {
  const users = `# the operators\nana:read-write:${ANA}\nbob:read-only:${BOB}\n`;

  it("each logs in with their password; a read-only one gets the read-only console; the name is logged on each action", async () => {
    const { url, daemon } = await start({ CONSOLE_USERS: users });
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: basic("ana", BOB) })).status).toBe(401);
    expect((await fetch(url, { headers: basic("eve", ANA) })).status).toBe(401);
    const bobsPage = await (await fetch(new URL("/dead-rows", url), { headers: basic("bob", BOB) })).text();
    expect(bobsPage).toContain("Read-only: actions are off");
    const bob = await formPoster(url, basic("bob", BOB));
    expect((await bob("/actions/preview", { action: "skip" })).status).toBe(403);
    const ana = await formPoster(url, basic("ana", ANA));
    const preview = await ana("/actions/preview", { action: "skip" });
    expect(preview.status).toBe(200);
    const ids = [...(await preview.text()).matchAll(/name="ids" value="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(ids.length).toBeGreaterThan(0);
    expect((await ana("/actions/run", { action: "skip", ids: ids.join(",") })).status).toBe(200);
    expect(await daemon.waitForLog("console action", { action: "skip" })).toMatchObject({ who: "ana" });
  });

  it("without operators, no who is logged: the token names nobody, nor does a loopback console", async () => {
    const token = "a-console-token-of-some-length";
    const { url, daemon } = await start({ CONSOLE_TOKEN: token });
    const post = await formPoster(url, basic("mallory", token));
    expect((await post("/replays/stop", { run: randomUUID() })).status).toBe(404);
    const line = await daemon.waitForLog("console action", { action: "stop-republish" });
    expect(line).not.toHaveProperty("who");
  });

  it("a bad list stops the start: exit 78, one line per problem, no password repeated", async () => {
    const lines = await configRefusal(ENTRY, {
      ...seeded.env,
      CONSOLE_USERS: `ana:admin:${ANA}\nbob:read-only:short\nana:read-write:${ANA}`,
    });
    expect(lines).toEqual([
      "console: config error: CONSOLE_USERS: line 1: the access must be read-write or read-only (name:access:password)",
      "console: config error: CONSOLE_USERS: line 2: the password must be at least 16 characters",
    ]);
    expect(lines.join("\n")).not.toContain(ANA);
  });
});
