/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The console's only script, bundled with uPlot by the build (page-script.ts, served from /assets): the page
// is whole without it (server-rendered, forms that post); it adds the live refresh and the charts.
import uPlot from "uplot";
import { liveRefresh } from "./live-refresh.js";

interface MinuteSeries {
  readonly minutes: number[];
  readonly published: Record<string, number[]>;
  readonly lagSeconds: (number | null)[];
  readonly processed: Record<string, number[]>;
}

/** Lines told apart by dash as well as colour: colour is never the only signal. */
const STROKES = ["#1f5fbf", "#b3461d", "#2b7a3d", "#6b3fa0", "#8a6d00", "#00707a"];
const DASHES: number[][] = [[], [8, 4], [2, 3], [12, 3, 2, 3], [4, 4], [1, 6]];

const charts = new Map<string, uPlot>();

function readSeries(): MinuteSeries | undefined {
  const block = document.getElementById("flow-series");
  return block?.textContent ? (JSON.parse(block.textContent) as MinuteSeries) : undefined;
}

function lineOf(label: string, index: number): uPlot.Series {
  return {
    label,
    stroke: STROKES[index % STROKES.length],
    dash: DASHES[index % DASHES.length],
    width: 2,
  };
}

function draw(id: string, labels: readonly string[], data: uPlot.AlignedData, unit: string): void {
  const target = document.getElementById(id);
  if (!target) return;
  const existing = charts.get(id);
  // The same lines: new points only. Other lines (a topic appeared): drawn again.
  if (existing && existing.series.length === labels.length + 1) {
    existing.setData(data);
    return;
  }
  existing?.destroy();
  const chart = new uPlot(
    {
      width: Math.max(320, target.clientWidth),
      height: 220,
      series: [{}, ...labels.map(lineOf)],
      axes: [{}, { label: unit }],
      scales: { x: { time: true } },
    },
    data,
    target,
  );
  charts.set(id, chart);
}

function drawCharts(): void {
  const series = readSeries();
  if (!series) return;
  const published = Object.entries(series.published);
  const processed = Object.entries(series.processed);
  draw(
    "chart-rates",
    [
      ...published.map(([topic]) => `published: ${topic}`),
      ...processed.map(([name]) => `processed: ${name}`),
    ],
    [series.minutes, ...published.map(([, values]) => values), ...processed.map(([, values]) => values)],
    "events / min",
  );
  draw("chart-lag", ["relay lag"], [series.minutes, series.lagSeconds], "seconds");
}

/** What the person set in a live block, kept across its replacement: open rows, ticked boxes. */
function keepState(from: Element, to: Element): void {
  for (const details of from.querySelectorAll("details[open]")) {
    if (details.id) to.querySelector(`#${CSS.escape(details.id)}`)?.setAttribute("open", "");
  }
  for (const box of from.querySelectorAll<HTMLInputElement>("input[type=checkbox]:checked")) {
    const same = to.querySelector<HTMLInputElement>(
      `input[type=checkbox][name="${CSS.escape(box.name)}"][value="${CSS.escape(box.value)}"]`,
    );
    if (same) same.checked = true;
  }
}

const status = document.getElementById("live-status");

/** One refresh: whether it succeeded. Its failure is said on the page; nothing is retried here. */
async function refresh(): Promise<boolean> {
  const url = new URL(location.href);
  // A refresh never asks for a new walk of the DLQ: it shows SQS's counts live, the listing as read.
  url.searchParams.delete("fresh");
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: "text/html", "x-console-refresh": "1" } });
  } catch {
    if (status) status.textContent = "Refresh failed: the console did not answer. Retrying later.";
    return false;
  }
  if (!response.ok) {
    if (status) status.textContent = `Refresh failed: HTTP ${response.status}. Retrying later.`;
    return false;
  }
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const live of document.querySelectorAll("[data-live]")) {
    const replacement = fresh.getElementById(live.id);
    // A block the person is working in (focus inside) waits for the next refresh.
    if (!replacement || live.contains(document.activeElement)) continue;
    const adopted = document.importNode(replacement, true);
    keepState(live, adopted);
    live.replaceWith(adopted);
  }
  drawCharts();
  if (status) status.textContent = `Updated at ${new Date().toLocaleTimeString()}.`;
  return true;
}

drawCharts();
const seconds = Number(document.body.dataset.refreshSeconds ?? "0");
if (seconds > 0) {
  liveRefresh(refresh, seconds * 1_000, {
    get hidden() {
      return document.hidden;
    },
    onVisibilityChange: (listener) => document.addEventListener("visibilitychange", listener),
  });
}
