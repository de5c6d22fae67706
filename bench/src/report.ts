import type { Row } from "./context.js";
import type { Summary } from "./measure.js";

function figure(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (Math.abs(value) >= 100) return String(Math.round(value));
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function formatSummary(summary: Summary): string {
  if (summary.runs.length <= 1) return figure(summary.median);
  return `${figure(summary.median)} (${figure(summary.min)}–${figure(summary.max)})`;
}

/** ours / peer on the medians. */
export function ratio(row: Row): number {
  if (!row.peer) return Number.NaN;
  const peer = row.peer.summary.median;
  return peer === 0 ? (row.ours.median === 0 ? 1 : Number.POSITIVE_INFINITY) : row.ours.median / peer;
}

function formatRatio(row: Row): string {
  const r = ratio(row);
  if (Number.isNaN(r)) return "–";
  if (!Number.isFinite(r)) return "∞";
  return `${r >= 10 ? r.toFixed(0) : r.toFixed(2)}×`;
}

/** The Markdown table: median (min–max) of the runs, ratio = ours / peer on the medians. */
export function markdownTable(rows: readonly Row[]): string {
  const lines = [
    "| scenario | metric | ours | peer | peer figure | ratio ours/peer | note |",
    "| --- | --- | ---: | --- | ---: | ---: | --- |",
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.scenario} | ${row.metric} (${row.better} is better) | ${formatSummary(row.ours)} | ${row.peer?.name ?? "–"} | ${row.peer ? formatSummary(row.peer.summary) : "–"} | ${formatRatio(row)} | ${row.note ?? ""} |`,
    );
  }
  return lines.join("\n");
}
