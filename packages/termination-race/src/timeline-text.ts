import type { ReplicaState, TickFrame } from "./race.js";

/** One character per replica per tick, so the accident window reads as a run of `!`. */
export const STATE_CHARACTERS: Readonly<Record<ReplicaState, string>> = {
  serving: "=",
  refusing: "!",
  leaving: "~",
  gone: ".",
};

export const TIMELINE_LEGEND =
  "= serving   ! on the target list but refusing (the accident window)   ~ off the list, still running   . gone   digits: requests dropped in that tick (* for 10 or more)";

function dropMark(dropped: number): string {
  if (dropped === 0) return " ";
  return dropped < 10 ? String(dropped) : "*";
}

/**
 * The run as text: a tick ruler, then per replica its state in every tick and, under it when it
 * lost any, how many requests it lost in each (refused or cut); the empty endpoint list's losses last.
 */
export function renderTimeline(frames: readonly TickFrame[]): string[] {
  const names = frames[0]?.replicas.map((replica) => replica.replica) ?? [];
  const width = Math.max("no endpoint".length, ...names.map((name) => name.length + 2)) + 2;
  const row = (label: string, cells: string) => `${label.padEnd(width)}${cells}`.trimEnd();
  const tens = frames
    .map((frame) => (frame.at % 10 === 0 ? String(Math.floor(frame.at / 10)) : " "))
    .join("");
  const units = frames.map((frame) => String(frame.at % 10)).join("");
  const lines = [row("tick", tens), row("", units)];
  names.forEach((name, index) => {
    const ticks = frames.map((frame) => frame.replicas[index]);
    lines.push(row(name, ticks.map((tick) => (tick ? STATE_CHARACTERS[tick.state] : " ")).join("")));
    const drops = ticks.map((tick) => (tick ? tick.refused + tick.cut : 0));
    if (drops.some((n) => n > 0)) lines.push(row("  dropped", drops.map(dropMark).join("")));
  });
  const unroutable = frames.map((frame) => frame.unroutable);
  if (unroutable.some((n) => n > 0)) lines.push(row("no endpoint", unroutable.map(dropMark).join("")));
  return lines;
}
