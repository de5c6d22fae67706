import type { IncomingMessage, ServerResponse } from "node:http";
import type { PublishStats } from "./stats.js";

export const STATS_PATH = "/_stats";

/** `GET` reads the publish statistics, `DELETE` resets them (and answers the empty state). */
export function handleStatsControl(req: IncomingMessage, res: ServerResponse, stats: PublishStats): void {
  let status = 200;
  let reply: unknown;
  if (req.method === "GET") reply = stats.snapshot();
  else if (req.method === "DELETE") {
    stats.reset();
    reply = stats.snapshot();
  } else {
    status = 405;
    reply = { error: `method ${req.method} not allowed` };
  }
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(reply));
}
