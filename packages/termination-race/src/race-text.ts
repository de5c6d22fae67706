import type { LogEntry, RaceCounts } from "./race.js";

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "dropped 10 (8 refused, 2 cut by SIGKILL)": the total, then only the causes that occurred. */
export function describeDrops(counts: RaceCounts): string {
  const causes = [
    [counts.refused, "refused"],
    [counts.unroutable, "with no endpoint left"],
    [counts.cutBySigkill, "cut by SIGKILL"],
    [counts.cutByLoadBalancer, "cut by the load balancer"],
    [counts.abandonedByDrain, "given up by the app's drain timeout"],
  ] as const;
  const present = causes.filter(([n]) => n > 0).map(([n, cause]) => `${n} ${cause}`);
  return present.length === 0 ? "dropped 0" : `dropped ${counts.dropped} (${present.join(", ")})`;
}

/** "served 54, dropped 2 (2 cut by SIGKILL)": the line `pnpm simulate` prints and the page shows. */
export function describeCounts(counts: RaceCounts): string {
  return `served ${counts.served}, ${describeDrops(counts)}`;
}

export function describeEntry(entry: LogEntry): string {
  const who = entry.replica ?? "endpoints";
  const { event } = entry;
  switch (event.kind) {
    case "stop-begins":
      return `${who} stop begins (leaves the endpoint list at t=${event.removeAt}, SIGTERM at t=${event.sigtermAt})`;
    case "removed":
      return `${who} leaves the endpoint list`;
    case "disconnected":
      return `${who}: the load balancer closes its connections, cutting ${plural(event.cut, "request")}`;
    case "sigterm":
      return `${who} gets SIGTERM and stops accepting (${event.inFlight} in flight)`;
    case "drained":
      return `${who} has finished its work in flight and exits`;
    case "drain-timeout":
      return `${who}'s drain timeout gives up on ${plural(event.abandoned, "request")} and exits`;
    case "killed":
      return `${who} gets SIGKILL with ${plural(event.cut, "request")} in flight`;
    case "refused":
      return `${who} is still routed to but no longer accepts: 1 request lost`;
    case "no-endpoints":
      return `the endpoint list is empty: ${plural(event.lost, "request")} lost`;
  }
}

/** The log as lines, a run of identical lines in one tick folded into one with its count. */
export function renderLog(log: readonly LogEntry[]): string[] {
  const lines: string[] = [];
  let previous = "";
  let repeats = 0;
  const flush = () => {
    if (previous) lines.push(repeats > 1 ? `${previous} (×${repeats})` : previous);
  };
  for (const entry of log) {
    const line = `t=${entry.at} ${describeEntry(entry)}`;
    if (line === previous) {
      repeats++;
      continue;
    }
    flush();
    previous = line;
    repeats = 1;
  }
  flush();
  return lines;
}
