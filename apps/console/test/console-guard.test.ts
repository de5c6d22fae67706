import { spawn } from "node:child_process";
import http from "node:http";
import readline from "node:readline";
import {
  awsClients,
  configRefusal,
  createTestDatabase,
  type DaemonProcess,
  expectAnswer,
  expectUsageError,
  repoPath,
  runEntryPoint,
  versionOf,
} from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleStack, seedConsoleStack, startConsoleProcess } from "./console-stack.js";

const ENTRY = "apps/console/src/main.ts";
const TOKEN = "a-console-token-of-some-length";
const { sqs } = awsClients();

let seeded: ConsoleStack;
const started: DaemonProcess[] = [];

async function start(env: Record<string, string>, args: string[] = []): Promise<string> {
  const { process, url } = await startConsoleProcess({ ...seeded.env, ...env }, args);
  started.push(process);
  return url;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}

/** A page's CSRF cookie and the token its forms carry. */
async function csrfOf(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ cookie: string; token: string }> {
  const response = await fetch(new URL("/dead-rows", url), { headers });
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const token = /name="csrf" value="([^"]+)"/.exec(await response.text())?.[1] ?? "";
  return { cookie, token };
}

beforeAll(async () => {
  seeded = await seedConsoleStack("console_guard", sqs);
}, 120_000);

afterAll(async () => {
  for (const process of started) if (process.child.exitCode === null) await process.stop("SIGTERM");
  await seeded?.handle.close(5_000);
  sqs.destroy();
});

describe("pnpm console's command line", () => {
  it("--help prints the usage and every variable it reads, exit 0; --version the package's", async () => {
    expectAnswer(
      await runEntryPoint(ENTRY, ["--help"]),
      /^usage: pnpm console \[--read-only\][\s\S]*CONSOLE_TOKEN[\s\S]*DATABASE_URL/,
    );
    expectAnswer(
      await runEntryPoint(ENTRY, ["--version"]),
      new RegExp(`^${versionOf("apps/console/package.json").replaceAll(".", "\\.")}\n$`),
    );
  });

  it("a wrong command line exits 64 with the reason and the usage", async () => {
    expectUsageError(
      await runEntryPoint(ENTRY, ["--port", "1"]),
      "Unknown option '--port'",
      /^usage: pnpm console/,
    );
    expectUsageError(
      await runEntryPoint(ENTRY, ["serve"]),
      "unexpected argument: serve",
      /^usage: pnpm console/,
    );
  });

  it("refuses to listen off loopback without a token, or with a short one: exit 78, one line each", async () => {
    const lines = await configRefusal(ENTRY, { ...seeded.env, CONSOLE_HOST: "0.0.0.0", CONSOLE_TOKEN: "" });
    expect(lines).toEqual([
      "console: config error: CONSOLE_TOKEN: is required when CONSOLE_HOST is not loopback (got 0.0.0.0): set a secret (or CONSOLE_USERS), or bind 127.0.0.1",
    ]);
    const short = await configRefusal(ENTRY, { ...seeded.env, CONSOLE_TOKEN: "short" });
    expect(short).toEqual(["console: config error: CONSOLE_TOKEN: must be at least 16 characters"]);
  });
});

describe("pnpm console's start and stop", { timeout: 120_000 }, () => {
  it("refuses a database without its migrations, naming them and the command: exit 78", async () => {
    const empty = await createTestDatabase("console_unmigrated");
    const lines = await configRefusal(ENTRY, { ...seeded.env, DATABASE_URL: empty });
    expect(lines).toEqual([
      expect.stringMatching(
        /^console: the database lacks \d+ migrations, 0001_outbox_and_inbox to 0015_outbox_operator_reads; apply them with `pnpm migrate`/,
      ),
    ]);
  });

  it("`pnpm console` stops at a SIGTERM sent to pnpm's pid, which does not pass it on", async () => {
    const child = spawn("pnpm", ["--silent", "console"], {
      cwd: repoPath("."),
      env: { ...process.env, ...seeded.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: Record<string, unknown>[] = [];
    const wakes = new Set<() => void>();
    // The console's stdout is pnpm's: read after pnpm is gone too, until the console closes it.
    const closed = new Promise<void>((resolve) => child.stdout.on("close", resolve));
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("{")) lines.push(JSON.parse(line) as Record<string, unknown>);
      for (const wake of wakes) wake();
    });
    const logged = (msg: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${msg}" within 60 s`)), 60_000);
        const check = () => {
          const found = lines.find((line) => line.msg === msg);
          if (found === undefined) return;
          clearTimeout(timer);
          wakes.delete(check);
          resolve(found);
        };
        wakes.add(check);
        check();
      });
    const listening = await logged("console listening");
    try {
      const url = String(listening.url);
      expect((await fetch(url)).status).toBe(200);
      child.kill("SIGTERM");
      await logged("console stopped");
      await closed;
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      // Left serving (the failure this test is for): the console's own pid, which it logged.
      if (!lines.some((line) => line.msg === "console stopped"))
        process.kill(Number(listening.pid), "SIGKILL");
    }
  });

  it("stops at SIGTERM, exit 0", async () => {
    const { process } = await startConsoleProcess(seeded.env);
    const exit = await process.stop("SIGTERM");
    expect(exit.code).toBe(0);
    await process.waitForLog("console stopped");
  });
});

describe("the console's guard", { timeout: 120_000 }, () => {
  it("off loopback: 401 without the token (or with a wrong one), the page with it; the token never rendered", async () => {
    const url = await start({ CONSOLE_HOST: "0.0.0.0", CONSOLE_TOKEN: TOKEN });
    // Bound to every address, asked on loopback only (tests send traffic to 127.0.0.1).
    const local = url.replace("0.0.0.0", "127.0.0.1");
    const bare = await fetch(local);
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toMatch(/^Basic realm="outbox console"/);
    expect(
      (await fetch(local, { headers: { authorization: basic("ana", "wrong-token-of-length") } })).status,
    ).toBe(401);
    expect((await fetch(new URL("/assets/console.js", local))).status).toBe(401);
    const page = await fetch(local, { headers: { authorization: basic("ana", TOKEN) } });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(TOKEN);
    expect((await fetch(local, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("every answer carries a strict Content-Security-Policy; the page has no inline script", async () => {
    const url = await start({});
    const response = await fetch(url);
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const html = await response.text();
    // Scripts: the bundle by URL, and JSON data blocks (never executed).
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((match) => match[1]?.trim());
    expect(scripts).toEqual([
      'type="module" src="/assets/console.js"',
      'type="application/json" id="flow-series"',
    ]);
    expect(html).not.toMatch(/ on[a-z]+=/i);
  });

  it("without a token, answers under a loopback name only (DNS rebinding gets 403)", async () => {
    const url = await start({});
    // fetch cannot send another Host: node:http can, as a re-pointed name in a browser would.
    const status = (host: string) =>
      new Promise<number | undefined>((resolve, reject) => {
        const request = http.get(url, { headers: { host } }, (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.on("error", reject);
      });
    expect(await status("attacker.example")).toBe(403);
    expect(await status(`localhost:${new URL(url).port}`)).toBe(200);
  });

  it("a cross-site POST is refused (CSRF), changing nothing; the console's own form is not", async () => {
    const url = await start({});
    const { rows: before } = await seeded.handle.db
      .selectFrom("outbox")
      .select("id")
      .where("dead_at", "is not", null)
      .execute()
      .then((rows) => ({ rows }));
    const form = (fields: Record<string, string>, headers: Record<string, string>) =>
      fetch(new URL("/actions/run", url), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields),
      });
    const ids = before.map((row) => row.id).join(",");
    // No cookie and no token: what another site's page can send.
    expect((await form({ action: "requeue", ids }, { origin: "https://attacker.example" })).status).toBe(403);
    const { cookie, token } = await csrfOf(url);
    // The right cookie and token, from another origin.
    expect(
      (await form({ action: "requeue", ids, csrf: token }, { cookie, origin: "https://attacker.example" }))
        .status,
    ).toBe(403);
    // A guessed token.
    expect((await form({ action: "requeue", ids, csrf: "x".repeat(43) }, { cookie })).status).toBe(403);
    const dead = await seeded.handle.db
      .selectFrom("outbox")
      .select("id")
      .where("dead_at", "is not", null)
      .execute();
    expect(dead.length).toBe(before.length);
    // The console's own preview: allowed, and it still changes nothing.
    const preview = await fetch(new URL("/actions/preview", url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: new URL(url).origin },
      body: new URLSearchParams({ action: "skip", csrf: token }),
    });
    expect(preview.status).toBe(200);
    expect(await preview.text()).toMatch(/This will skip <strong>\d+<\/strong> dead rows/);
  });

  it("read-only: no action offered, and a POST is refused with 403 even with a valid token", async () => {
    const url = await start({}, ["--read-only"]);
    const page = await (await fetch(new URL("/dead-rows", url))).text();
    expect(page).toContain("Read-only: actions are off");
    expect(page).not.toContain('action="/actions/preview"');
    const { cookie, token } = await csrfOf(url);
    const refused = await fetch(new URL("/actions/preview", url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams({ action: "skip", csrf: token }),
    });
    expect(refused.status).toBe(403);
  });
});
