import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type DaemonProcess, repoPath, startDaemonProcess, waitUntil } from "@outbox/test-kit/process";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDemoCell } from "../src/demo.js";
import { DEFAULT_SETUP, runSetup } from "../src/race-setup.js";

/** Debian's chromium package (.ci/run installs it): the real browser, driven over its DevTools protocol. */
function chromiumPath(): string {
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("no chromium on PATH: apt-get install -y chromium (see the README's set-up)");
  }
}

const SCREENSHOTS = repoPath("reports/termination-race");
const START = { ...DEFAULT_SETUP, preStop: 2, grace: 1 };
const BOUND_MS = 60_000;

function playgroundUrl(server: DaemonProcess): string | undefined {
  for (const line of server.lines) {
    const url = /^termination race playground: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(
      String(line.text ?? ""),
    )?.[1];
    if (url) return url;
  }
  return undefined;
}

async function text(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (element) => element.textContent ?? "");
}

async function totals(page: Page): Promise<{ served: number; dropped: number }> {
  return { served: Number(await text(page, "#served")), dropped: Number(await text(page, "#dropped")) };
}

async function pick(page: Page, field: "preStop" | "grace", value: number): Promise<void> {
  await page.click(`button[data-field=${field}][data-value="${value}"]`);
}

describe("pnpm simulate --serve, in headless Chromium", { timeout: 120_000 }, () => {
  let server: DaemonProcess;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    server = startDaemonProcess(
      "packages/termination-race/src/cli/simulate.ts",
      {},
      {
        name: "playground",
        args: ["--serve", "--port", "0", "--pre-stop", String(START.preStop), "--grace", String(START.grace)],
      },
    );
    await waitUntil("the playground's URL", () => playgroundUrl(server) !== undefined, {
      timeoutMs: BOUND_MS,
      alive: [server],
    });
    browser = await puppeteer.launch({
      executablePath: chromiumPath(),
      // Root in CI: Chromium's sandbox needs a user namespace it is not given there.
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
      timeout: BOUND_MS,
    });
    page = await browser.newPage();
    page.setDefaultTimeout(BOUND_MS);
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    page.on("requestfailed", (request) => pageErrors.push(`request failed: ${request.url()}`));
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(playgroundUrl(server) ?? "", { waitUntil: "load" });
    await page.waitForFunction(() => document.querySelector("#served")?.textContent !== "–");
  });

  afterAll(async () => {
    await browser?.close();
    if (server && server.child.exitCode === null) await server.stop("SIGTERM");
  });

  it("starts from the command line's setup", async () => {
    expect(await page.$eval("#preStop", (input) => (input as HTMLInputElement).value)).toBe("2");
    expect(await totals(page)).toEqual({
      served: runSetup(START).counts.served,
      dropped: runSetup(START).counts.dropped,
    });
  });

  it("shows the document's headline with preStop 0 / grace 10: 48 served, 8 dropped, 4 ticks refusing", async () => {
    // The source document's numbers first, from the simulator itself: the page must show these.
    expect(runDemoCell(0, 10).counts).toMatchObject({ served: 48, dropped: 8 });
    await pick(page, "preStop", 0);
    await pick(page, "grace", 10);
    expect(await totals(page)).toEqual({ served: 48, dropped: 8 });
    expect(await page.$$eval(".timeline .cell.refusing", (cells) => cells.length)).toBe(4);
    expect(
      await page.$$eval(".timeline .cell.dropped", (cells) => cells.map((cell) => cell.textContent)),
    ).toEqual(["2", "2", "2", "2"]);
    expect(await text(page, "#explanation")).toMatch(/^8 dropped, 48 served: 8 refused in 4 ticks/);
    expect(await page.$$eval("#log li", (items) => items.length)).toBeGreaterThan(0);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, "playground-prestop-0.png"), fullPage: true });
  });

  it("drops nothing once preStop covers the propagation", async () => {
    expect(runDemoCell(4, 10).counts.dropped).toBe(0);
    await pick(page, "preStop", 4);
    expect(await totals(page)).toEqual({ served: 56, dropped: 0 });
    expect(
      await page.$$eval(".timeline .cell.refusing, .timeline .cell.dropped", (cells) => cells.length),
    ).toBe(0);
    expect(await text(page, "#explanation")).toMatch(/^0 dropped, 56 served/);
    await page.screenshot({ path: path.join(SCREENSHOTS, "playground-prestop-4.png"), fullPage: true });
  });

  it("always drops with one replica, even with the planner's recommendation", async () => {
    await page.locator("#replicas").fill("1");
    await page.click("#recommend");
    expect(await page.$eval("#grace", (input) => (input as HTMLInputElement).value)).toBe(String(4 + 3 + 5));
    expect((await totals(page)).dropped).toBeGreaterThan(0);
    expect(await text(page, ".timeline")).toContain("no endpoint");
    expect(await text(page, "#plan")).toContain(
      "pnpm plan fails: with 1 replica the endpoint list is empty while it stops",
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, "playground-one-replica.png"), fullPage: true });
  });

  it("applies pnpm plan's answer on ECS: the delay and the stopTimeout, and nothing drops", async () => {
    await page.locator("#replicas").fill("2");
    await page.select("#platform", "ecs");
    expect(await text(page, "[data-label=preStop]")).toBe("deregistration delay (ticks)");
    await page.click("#recommend");
    expect(await text(page, "#plan")).toBe(
      "pnpm plan recommends deregistration delay 7 s, stopTimeout 8 s (margin 5 s).",
    );
    expect(await page.$eval("#preStop", (input) => (input as HTMLInputElement).value)).toBe("7");
    expect((await totals(page)).dropped).toBe(0);
  });

  it("loaded everything from the server and ran without an error", () => {
    expect(pageErrors).toEqual([]);
  });

  it("stops cleanly on SIGTERM", async () => {
    await browser.close();
    const exit = await server.stop("SIGTERM");
    expect(exit).toMatchObject({ code: 0, signal: null });
  });
});
