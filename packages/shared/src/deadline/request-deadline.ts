import type { IncomingMessage, ServerResponse } from "node:http";
import { Deadline } from "@outbox/client";
import { REQUEST_TIMEOUT_HEADER } from "./deadline-fetch.js";

/** Our own cap, inside the platform's 30 s grace and the caller-facing 30 s write timeout. */
export const DEFAULT_REQUEST_CAP_MS = 25_000;

// Canonical whole numbers only: "-0", "+5", "007" or "1e3" are someone's bug, not a budget.
const wholeNumber = /^(0|-?[1-9]\d*)$/;

/** What an incoming `X-Request-Timeout-Ms` leaves us: the caller already gave up, or a budget in ms. */
export type RequestBudget = { readonly expired: true } | { readonly expired: false; readonly ms: number };

/**
 * min(the caller's `X-Request-Timeout-Ms`, our cap). A value ≤ 0 means the caller has already given
 * up. A malformed value (not a canonical whole number, or beyond what a number holds exactly) is
 * ignored and the cap applies: rejecting it with 400 would turn a header typo upstream into an outage.
 */
export function requestBudget(header: string | readonly string[] | undefined, capMs: number): RequestBudget {
  const raw = (typeof header === "string" ? header : header?.[0])?.trim();
  if (raw === undefined || !wholeNumber.test(raw)) return { expired: false, ms: capMs };
  const received = Number(raw);
  if (!Number.isSafeInteger(received)) return { expired: false, ms: capMs };
  if (received <= 0) return { expired: true };
  return { expired: false, ms: Math.min(received, capMs) };
}

/**
 * The deadline of an incoming request on node:http (see `requestBudget`). When the caller has already
 * given up it answers 504 without doing any work and returns `null`. The deadline also aborts when
 * the client disconnects.
 */
export function requestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  capMs: number = DEFAULT_REQUEST_CAP_MS,
): Deadline | null {
  const budget = requestBudget(req.headers[REQUEST_TIMEOUT_HEADER.toLowerCase()], capMs);
  if (budget.expired) {
    res.writeHead(504, { "content-type": "text/plain; charset=utf-8" }).end("deadline already exceeded\n");
    return null;
  }
  const disconnected = new AbortController();
  const deadline = Deadline.after(budget.ms, disconnected.signal);
  res.once("close", () => {
    if (!res.writableFinished) disconnected.abort(new Error("client disconnected"));
    deadline.dispose();
  });
  return deadline;
}
