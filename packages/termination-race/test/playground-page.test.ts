import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openHeadlessPage } from "@outbox/test-kit/headless-page";
import { type DaemonProcess, repoPath, startDaemonProcess, waitUntil } from "@outbox/test-kit/process";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO } from "../src/demo.js";
import { DEFAULT_SETUP, type RacePlatform, runSetup } from "../src/race-setup.js";

const SCREENSHOTS = repoPath("reports/termination-race");
const START = { ...DEFAULT_SETUP, platform: "document" as const, preStop: 2, grace: 1 };
const BOUND_MS = 60_000;

interface Preset {
  readonly platform: RacePlatform;
  readonly preStop: number;
  readonly grace: number;
  /** The grace button's label once both presets are pressed. */
  readonly graceLabel: string;
  /** The counts line, as `pnpm simulate` prints it. */
  readonly counts: string;
}

/*
 * Every preset of the page in both orders, at the source document's numbers (its demo grid: the
 * document's own model, SIGKILL the grace after SIGTERM). Kubernetes' order counts the grace from
 * the deletion, so a grace of 1 under a preStop of 2 or 4 moves SIGTERM instead of cutting work.
 */
const DOCUMENT_PRESETS: readonly Preset[] = [
  {
    preStop: 0,
    grace: 1,
    graceLabel: "1 (shorter than the work)",
    counts: "served 46, dropped 10 (8 refused, 2 cut by SIGKILL)",
  },
  { preStop: 0, grace: 10, graceLabel: "10 (covers the work)", counts: "served 48, dropped 8 (8 refused)" },
  {
    preStop: 2,
    grace: 1,
    graceLabel: "1 (shorter than the work)",
    counts: "served 50, dropped 6 (4 refused, 2 cut by SIGKILL)",
  },
  { preStop: 2, grace: 10, graceLabel: "10 (covers the work)", counts: "served 52, dropped 4 (4 refused)" },
  {
    preStop: 4,
    grace: 1,
    graceLabel: "1 (shorter than the work)",
    counts: "served 54, dropped 2 (2 cut by SIGKILL)",
  },
  { preStop: 4, grace: 10, graceLabel: "10 (covers the work)", counts: "served 56, dropped 0" },
].map((preset) => ({ ...preset, platform: "document" }));

const KUBERNETES_PRESETS: readonly Preset[] = [
  {
    preStop: 0,
    grace: 1,
    graceLabel: "1 (shorter than the preStop plus the work)",
    counts: "served 46, dropped 10 (8 refused, 2 cut by SIGKILL)",
  },
  {
    preStop: 0,
    grace: 10,
    graceLabel: "10 (covers the preStop and the work)",
    counts: "served 48, dropped 8 (8 refused)",
  },
  {
    preStop: 2,
    grace: 1,
    graceLabel: "1 (within the preStop: SIGTERM comes at the grace)",
    counts: "served 50, dropped 6 (6 refused)",
  },
  {
    preStop: 2,
    grace: 10,
    graceLabel: "10 (covers the preStop and the work)",
    counts: "served 52, dropped 4 (4 refused)",
  },
  {
    preStop: 4,
    grace: 1,
    graceLabel: "1 (within the preStop: SIGTERM comes at the grace)",
    counts: "served 50, dropped 6 (6 refused)",
  },
  {
    preStop: 4,
    grace: 10,
    graceLabel: "10 (covers the preStop and the work)",
    counts: "served 56, dropped 0",
  },
].map((preset) => ({ ...preset, platform: "k8s" }));

/** `pnpm simulate`'s two grids, cell by cell: "document 4/1" → "served 54, dropped 2 (2 cut by SIGKILL)". */
function terminalGrids(): Map<string, string> {
  const { status, stdout } = spawnSync(
    process.execPath,
    ["--import", "tsx", "--conditions=development", "src/cli/simulate.ts"],
    { cwd: repoPath("packages/termination-race"), encoding: "utf8" },
  );
  if (status !== 0) throw new Error(`pnpm simulate exited ${status}`);
  const cells = new Map<string, string>();
  const [document = "", k8s = ""] = stdout.split("\nKubernetes: ");
  for (const [platform, text] of [
    ["document", document],
    ["k8s", k8s],
  ] as const) {
    const rows = text.split("\n").filter((line) => /^\| \d+ \(/.test(line));
    for (const row of rows) {
      const [label = "", ...columns] = row.split(" | ");
      const preStop = Number.parseInt(label.slice(2), 10);
      DEMO.graces.forEach((grace, index) => {
        cells.set(`${platform} ${preStop}/${grace}`, (columns[index] ?? "").replace(/ \|$/, ""));
      });
    }
  }
  return cells;
}

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

async function choose(page: Page, platform: RacePlatform): Promise<void> {
  await page.click(`input[name=platform][value=${platform}]`);
}

describe("pnpm simulate --serve, in headless Chromium", { timeout: 120_000 }, () => {
  let server: DaemonProcess;
  let browser: Browser;
  let page: Page;
  let terminal: Map<string, string>;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    server = startDaemonProcess(
      "packages/termination-race/src/cli/simulate.ts",
      {},
      {
        name: "playground",
        args: [
          "--serve",
          "--port",
          "0",
          "--platform",
          START.platform,
          "--pre-stop",
          String(START.preStop),
          "--grace",
          String(START.grace),
        ],
      },
    );
    terminal = terminalGrids();
    await waitUntil("the playground's URL", () => playgroundUrl(server) !== undefined, {
      timeoutMs: BOUND_MS,
      alive: [server],
    });
    ({ browser, page } = await openHeadlessPage(BOUND_MS, pageErrors));
    await page.goto(playgroundUrl(server) ?? "", { waitUntil: "load" });
    await page.waitForFunction(() => document.querySelector("#served")?.textContent !== "–");
  });

  afterAll(async () => {
    await browser?.close();
    if (server && server.child.exitCode === null) await server.stop("SIGTERM");
  });

  it("starts from the command line's setup, the document's model chosen and explained", async () => {
    expect(await page.$eval("#preStop", (input) => (input as HTMLInputElement).value)).toBe("2");
    expect(
      await page.$eval(
        "input[name=platform][value=document]",
        (input) => (input as HTMLInputElement).checked,
      ),
    ).toBe(true);
    expect(await totals(page)).toEqual({
      served: runSetup(START).counts.served,
      dropped: runSetup(START).counts.dropped,
    });
    // Each order is a visible choice with its sentence.
    const choices = await page.$$eval("#platforms label", (labels) =>
      labels.map((label) => label.textContent?.trim()),
    );
    expect(choices).toEqual([
      "the source document's model: SIGKILL comes the grace after SIGTERM, however long the preStop, so a grace shorter than the work cuts the requests in flight.",
      "Kubernetes: terminationGracePeriod counts from the deletion and holds the preStop, so a preStop that outlives it gets SIGTERM at the grace and SIGKILL 2 ticks later.",
      "ECS behind an ALB: the deregistration delay holds SIGTERM back and ends with the ALB closing the connections; SIGKILL comes the stopTimeout after SIGTERM.",
    ]);
  });

  const name = { document: "the document's model", k8s: "Kubernetes' model" } as const;
  for (const preset of [...DOCUMENT_PRESETS, ...KUBERNETES_PRESETS]) {
    it(`${name[preset.platform as "document" | "k8s"]}, preStop ${preset.preStop} / grace ${preset.grace}: ${preset.counts}, as pnpm simulate prints`, async () => {
      await choose(page, preset.platform);
      await pick(page, "preStop", preset.preStop);
      await pick(page, "grace", preset.grace);
      expect(await text(page, "#counts")).toBe(preset.counts);
      const [served, dropped] =
        /^served (\d+), dropped (\d+)/.exec(preset.counts)?.slice(1).map(Number) ?? [];
      expect(await totals(page)).toEqual({ served, dropped });
      // The terminal's grid gives the same cell for the same order.
      expect(terminal.get(`${preset.platform} ${preset.preStop}/${preset.grace}`)).toBe(preset.counts);
      expect(await text(page, `button[data-field=grace][data-value="${preset.grace}"]`)).toBe(
        preset.graceLabel,
      );
      expect(
        await page.$$eval("button[aria-pressed=true]", (buttons) =>
          buttons.map((button) => button.dataset.value),
        ),
      ).toEqual([String(preset.preStop), String(preset.grace)]);
    });
  }

  it("shows the document's third lesson: preStop 4 / grace 1 cuts the 2 requests in flight by SIGKILL, no refusal", async () => {
    await choose(page, "document");
    await pick(page, "preStop", 4);
    await pick(page, "grace", 1);
    expect(await page.$$eval(".timeline .cell.refusing", (cells) => cells.length)).toBe(0);
    expect(
      await page.$$eval(".timeline .cell.dropped", (cells) => cells.map((cell) => cell.textContent)),
    ).toEqual(["2"]);
    expect(await text(page, "#explanation")).toBe(
      "2 dropped, 54 served: 2 cut by SIGKILL (the grace 1 counts from SIGTERM, the work takes 3)",
    );
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({
      path: path.join(SCREENSHOTS, "playground-document-grace-1.png"),
      fullPage: true,
    });
  });

  it("shows the document's headline with preStop 0 / grace 10: 48 served, 8 dropped, 4 ticks refusing", async () => {
    await choose(page, "k8s");
    await pick(page, "preStop", 0);
    await pick(page, "grace", 10);
    expect(await totals(page)).toEqual({ served: 48, dropped: 8 });
    expect(await page.$$eval(".timeline .cell.refusing", (cells) => cells.length)).toBe(4);
    expect(
      await page.$$eval(".timeline .cell.dropped", (cells) => cells.map((cell) => cell.textContent)),
    ).toEqual(["2", "2", "2", "2"]);
    expect(await text(page, "#explanation")).toMatch(/^8 dropped, 48 served: 8 refused in 4 ticks/);
    expect(await page.$$eval("#log li", (items) => items.length)).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, "playground-prestop-0.png"), fullPage: true });
  });

  it("recommends in the document's model: Kubernetes' grace less the preStop, and nothing drops", async () => {
    await choose(page, "document");
    await page.click("#recommend");
    expect(await text(page, "#plan")).toBe(
      "pnpm plan recommends preStop 4 s, terminationGracePeriodSeconds 12 (margin 5 s). In the document's model: grace 8 after SIGTERM.",
    );
    expect(await page.$eval("#grace", (input) => (input as HTMLInputElement).value)).toBe("8");
    expect(await text(page, "#counts")).toBe("served 56, dropped 0");
    await choose(page, "k8s");
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
    await choose(page, "ecs");
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
