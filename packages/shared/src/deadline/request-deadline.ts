import type { IncomingMessage, ServerResponse } from "node:http";
import { Deadline } from "./deadline.js";
import { REQUEST_TIMEOUT_HEADER } from "./deadline-fetch.js";

/** Our own cap, inside the platform's 30 s grace and the caller-facing 30 s write timeout. */
export const DEFAULT_REQUEST_CAP_MS = 25_000;

const wholeNumber = /^-?\d+$/;

/**
 * The deadline of an incoming request: min(the caller's `X-Request-Timeout-Ms`, our cap). A value
 * ≤ 0 means the caller has already given up, so it answers 504 without doing any work and returns
 * `null`. A malformed value is ignored (the cap applies): rejecting it with 400 would turn a header
 * typo upstream into an outage. The deadline also aborts when the client disconnects.
 */
export function requestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  capMs: number = DEFAULT_REQUEST_CAP_MS,
): Deadline | null {
  const header = req.headers[REQUEST_TIMEOUT_HEADER.toLowerCase()];
  const raw = Array.isArray(header) ? header[0] : header;
  let budget = capMs;
  if (raw !== undefined && wholeNumber.test(raw.trim())) {
    const received = Number(raw.trim());
    if (received <= 0) {
      res.writeHead(504, { "content-type": "text/plain; charset=utf-8" }).end("deadline already exceeded\n");
      return null;
    }
    budget = Math.min(received, capMs);
  }
  const disconnected = new AbortController();
  const deadline = Deadline.after(budget, disconnected.signal);
  res.once("close", () => {
    if (!res.writableFinished) disconnected.abort(new Error("client disconnected"));
    deadline.dispose();
  });
  return deadline;
}
