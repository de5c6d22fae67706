import fs from "node:fs";
import { awsClients, type DaemonProcess, queueDepth, repoPath } from "@outbox/test-kit";
import { openHeadlessPage } from "@outbox/test-kit/headless-page";
import { sql } from "kysely";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  HOSTILE_TYPE,
  SEEDED,
  seedConsoleStack,
  startConsoleProcess,
} from "./console-stack.js";

const SCREENSHOTS = repoPath("reports/console");
const BOUND_MS = 60_000;
const { sqs } = awsClients();

let seeded: ConsoleStack;
let server: DaemonProcess;
let base: string;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

async function count(selector: string): Promise<number> {
  return Number(await page.$eval(selector, (element) => element.textContent?.trim() ?? ""));
}

async function visit(path: string): Promise<void> {
  await page.goto(new URL(path, base).href, { waitUntil: "load" });
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

/** Clicks and waits for the page the click leads to. */
async function clickThrough(selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(selector)]);
}

beforeAll(async () => {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  seeded = await seedConsoleStack("console_page", sqs);
  ({ process: server, url: base } = await startConsoleProcess(seeded.env));
  ({ browser, page } = await openHeadlessPage(BOUND_MS, pageErrors));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) await server.stop("SIGTERM");
  await seeded?.handle.close(5_000);
  sqs.destroy();
});

describe("the operator console in headless Chromium", { timeout: 120_000 }, () => {
  it("the flow: the backlog per topic, the consumer's rates, the queues, and both charts drawn", async () => {
    await visit("/");
    const waiting = SEEDED.blockedKeys * SEEDED.waitingPerKey;
    expect(await count('tr[data-topic="orders"] [data-count="unsent"]')).toBe(waiting);
    expect(await count('[data-count="total-dead"]')).toBe(SEEDED.deadRows);
    expect(await count('[data-count="total-blocked"]')).toBe(SEEDED.blockedKeys);
    const letters = Object.values(SEEDED.letters).reduce((sum, n) => sum + n, 0);
    expect(await count('[data-count="dlq-visible"]')).toBe(letters);
    expect(await page.$eval("#consumers tbody th", (cell) => cell.textContent)).toBe("photo-indexer");
    // uPlot drew both charts from the page's data block, bundled and served by the console itself.
    await page.waitForSelector("#chart-rates canvas");
    await page.waitForSelector("#chart-lag canvas");
    expect(
      await page.$$eval(".u-legend .u-label", (labels) => labels.map((label) => label.textContent)),
    ).toEqual(expect.arrayContaining(["published: orders", "processed: photo-indexer", "relay lag"]));
    await screenshot("flow");
  });

  it("the blocked keys: each head with its reason, attempts, age and the events waiting behind it", async () => {
    await visit("/blocked-keys");
    expect(await count('[data-count="blocked-keys"]')).toBe(SEEDED.blockedKeys);
    const keys = await page.$$eval("#blocked-keys tbody tr", (rows) =>
      rows.map((row) => [
        row.getAttribute("data-key"),
        row.querySelector('[data-count="waiting"]')?.textContent,
      ]),
    );
    // Held longest first: customer-3 died first.
    expect(keys).toEqual([
      ["customer-3", String(SEEDED.waitingPerKey)],
      ["customer-2", String(SEEDED.waitingPerKey)],
      ["customer-1", String(SEEDED.waitingPerKey)],
    ]);
    await screenshot("blocked-keys");
  });

  it("a hostile event type is shown as text: no element made of it, no script run", async () => {
    await visit("/dead-rows");
    expect(await page.$("img")).toBeNull();
    const types = await page.$$eval("#dead-rows-table td.type", (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(types).toContain(HOSTILE_TYPE);
    expect(await page.title()).not.toBe("pwned");
  });

  it("the dead rows: grouped by reason kind, each expandable to its headers and payload", async () => {
    await visit("/dead-rows");
    expect(await count('[data-count="dead-rows"]')).toBe(SEEDED.deadRows);
    const groups = await page.$$eval("#dead-row-groups tbody tr", (rows) =>
      rows.map((row) => [
        row.getAttribute("data-kind"),
        row.querySelector('[data-count="group"]')?.textContent,
      ]),
    );
    expect(groups).toEqual([
      ["InvalidParameter", "4"],
      ["other", "2"],
    ]);
    // Expanding a row by keyboard: its payload, escaped.
    const hostile = await page.$$eval("#dead-rows-table tbody tr", (rows) =>
      rows
        .find((row) => row.querySelector("td.type")?.textContent?.startsWith("<img"))
        ?.getAttribute("data-id"),
    );
    await page.focus(`tr[data-id="${hostile}"] summary`);
    await page.keyboard.press("Enter");
    expect(await page.$eval(`tr[data-id="${hostile}"] pre`, (pre) => pre.textContent)).toBe(
      '{"note": "<script>alert(1)</script>"}',
    );
    await screenshot("dead-rows");
  });

  it("a requeue by clicking: previewed, confirmed, reported; the counts and the table change", async () => {
    await visit("/blocked-keys");
    const head = await page.$eval('tr[data-key="customer-1"] code', (code) => code.textContent ?? "");
    await visit("/dead-rows");
    await page.click(`#pick-${head}`);
    await clickThrough('#dead-rows-selection button[value="requeue"]');
    expect(await page.$eval("#preview-count", (p) => p.textContent)).toBe("This will requeue 1 dead rows.");
    await screenshot("requeue-preview");
    await clickThrough("#confirm");
    expect(await page.$eval("#report", (p) => p.textContent)).toBe("Requeued 1 of 1 dead rows.");
    const { rows } = await sql<{ dead: boolean; attempts: number }>`
      SELECT dead_at IS NOT NULL AS dead, attempts FROM outbox WHERE id = ${head}::uuid
    `.execute(seeded.handle.db);
    expect(rows).toEqual([{ dead: false, attempts: 0 }]);
    // One line for the action: what, on what, how many, how it ended; no `who` (no operator list).
    const logged = await server.waitForLog("console action", { action: "requeue" });
    expect(logged).toMatchObject({
      filter: { ids: 1 },
      count: 1,
      outcome: { requeued: 1, refused: 0 },
    });
    expect(logged).not.toHaveProperty("who");
    await clickThrough("#back");
    expect(await count('[data-count="dead-rows"]')).toBe(SEEDED.deadRows - 1);
    expect(await page.$(`tr[data-id="${head}"]`)).toBeNull();
    await visit("/blocked-keys");
    expect(await count('[data-count="blocked-keys"]')).toBe(SEEDED.blockedKeys - 1);
  });

  it("the dead letters: the DLQ by reason (three kinds), each letter expandable", async () => {
    await visit("/dead-letters");
    const groups = await page.$$eval("#dead-letter-groups tbody tr", (rows) =>
      rows.map((row) => [
        row.getAttribute("data-kind"),
        Number(row.querySelector('[data-count="group"]')?.textContent),
      ]),
    );
    expect(Object.fromEntries(groups)).toEqual(SEEDED.letters);
    await screenshot("dead-letters");
  });

  it("a redrive of a group by clicking: the DLQ loses the group, the queue gets it", async () => {
    await visit("/dead-letters");
    await clickThrough('tr[data-kind="unknown_event_type"] button');
    const moving = SEEDED.letters.unknown_event_type;
    expect(await page.$eval("#preview-count", (p) => p.textContent)).toBe(
      `This will redrive ${moving} dead letters.`,
    );
    await clickThrough("#confirm");
    expect(await page.$eval("#report", (p) => p.textContent)).toBe(
      `Redrove ${moving} of ${moving} dead letters to the queue.`,
    );
    expect((await queueDepth(sqs, seeded.queues.queueUrl)).visible).toBe(moving);
    const logged = await server.waitForLog("console action", { action: "redrive" });
    expect(logged).toMatchObject({
      filter: { kind: "unknown_event_type" },
      count: moving,
      outcome: { moved: moving, failed: 0, complete: true },
    });
    await clickThrough("#back");
    const kinds = await page.$$eval("#dead-letter-groups tbody tr", (rows) =>
      rows.map((row) => row.getAttribute("data-kind")),
    );
    expect(kinds.sort()).toEqual(["body_not_json", "redrive_policy"]);
    expect(await count('[data-count="dead-letters"]')).toBe(
      SEEDED.letters.body_not_json + SEEDED.letters.redrive_policy,
    );
  });

  it("the replays: the stopped run with its progress and the command that resumes it", async () => {
    await visit("/replays");
    expect(await count('[data-count="sent"]')).toBe(70);
    expect(await count('[data-count="left"]')).toBe(80);
    expect(await page.$eval("#replays-table progress", (bar) => bar.getAttribute("aria-label"))).toMatch(
      /: 70 of 150$/,
    );
    await screenshot("replays");
  });

  it("a republish previewed from a range, and a stopped run resumed by clicking, watched to its end", async () => {
    await visit("/replays");
    // A new run over the last two hours: previewed (the published hour's 150 rows), not started.
    await page.type("#start-replay input[name=from]", new Date(Date.now() - 7_200_000).toISOString());
    await page.type("#start-retention", "24");
    await clickThrough("#start-replay button");
    expect(await count("#preview-count")).toBe(150);
    await visit("/replays");
    const run = await page.$eval("#replays-table tbody tr", (row) => row.getAttribute("data-run") ?? "");
    await page.type(`[id="resume-${run}-retention"]`, "24");
    await clickThrough(`form[aria-label="Resume run ${run}"] button`);
    expect(await count("#preview-count")).toBe(80);
    await clickThrough("#confirm");
    expect(await page.$eval("#report", (p) => p.textContent)).toMatch(
      /^Run .+ resumed; it goes on in the console/,
    );
    await clickThrough("#back");
    // Watched without a reload: the live refresh shows the run finish.
    await page.waitForFunction(
      () => document.querySelector('#replays-table [data-count="left"]')?.textContent === "0",
      { timeout: BOUND_MS },
    );
    expect(await count('[data-count="sent"]')).toBe(150);
    const logged = await server.waitForLog("console action", { action: "resume" });
    expect(logged).toMatchObject({ count: 80, outcome: { run, started: true } });
    await server.waitForLog("republish done", { run, finished: true });
  });

  it("refreshes itself without a reload: a row dying shows within a refresh", async () => {
    await visit("/");
    const before = await count('[data-count="total-dead"]');
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    await sql`UPDATE outbox SET dead_at = now(), last_error = 'KMSDisabled: key disabled'
              WHERE id = (SELECT id FROM outbox WHERE ordering_key = 'customer-2' AND dead_at IS NULL ORDER BY seq LIMIT 1)`.execute(
      seeded.handle.db,
    );
    await page.waitForFunction(
      (expected) =>
        document.querySelector('[data-count="total-dead"]')?.textContent?.trim() === String(expected),
      { timeout: BOUND_MS },
      before + 1,
    );
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
    expect(await page.$eval("#live-status", (status) => status.textContent)).toMatch(/^Updated at /);
  });

  it("every view: each control has a name, and the skip link takes the keyboard to the content", async () => {
    for (const path of ["/", "/blocked-keys", "/dead-rows", "/dead-letters", "/replays"]) {
      await visit(path);
      const unnamed = await page.$$eval("input:not([type=hidden]), select, button, a[href]", (controls) =>
        controls
          .filter((control) => {
            const labelled =
              (control as HTMLInputElement).labels?.length ||
              control.getAttribute("aria-label") ||
              control.textContent?.trim();
            return !labelled;
          })
          .map((control) => control.outerHTML.slice(0, 120)),
      );
      expect(unnamed, path).toEqual([]);
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await page.keyboard.press("Enter");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("content");
    }
  });

  it("loads nothing from elsewhere and breaks no rule of its Content-Security-Policy", () => {
    expect(pageErrors).toEqual([]);
  });
});
