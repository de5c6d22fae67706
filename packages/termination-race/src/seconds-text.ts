/** Milliseconds as seconds for people: "2.5 s", "30 s". */
export function secondsText(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
