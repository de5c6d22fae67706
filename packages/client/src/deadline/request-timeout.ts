import { Deadline, DeadlineExceededError } from "./deadline.js";

/** The caller's remaining time, in relative milliseconds: hosts' clocks differ, durations do not. */
export const REQUEST_TIMEOUT_HEADER = "X-Request-Timeout-Ms";

/**
 * Sender side. `fetch` bounded by a deadline: sends the remaining milliseconds in
 * `X-Request-Timeout-Ms` so the callee can stop when the caller has, and aborts the request at the
 * deadline. When no time is left it throws without sending anything: a request nobody will wait for
 * only adds load. There is no `signal` option on purpose: to cancel for another reason, derive the
 * deadline from that signal (`Deadline.after(ms, signal)`), so one signal bounds the call.
 */
export async function deadlineFetch(
  deadline: Deadline,
  input: string | URL,
  init: Omit<RequestInit, "signal"> = {},
): Promise<Response> {
  const remaining = Math.floor(deadline.remainingMs());
  if (remaining <= 0) throw new DeadlineExceededError(`deadline exceeded before sending to ${String(input)}`);
  const headers = new Headers(init.headers);
  headers.set(REQUEST_TIMEOUT_HEADER, String(remaining));
  return fetch(input, { ...init, headers, signal: deadline.signal });
}

// Canonical whole numbers only: "-0", "+5", "007" or "1e3" are someone's bug, not a budget.
const wholeNumber = /^(0|-?[1-9]\d*)$/;

/** What an incoming `X-Request-Timeout-Ms` leaves us: the caller already gave up, or a budget in ms. */
export type RequestBudget = { readonly expired: true } | { readonly expired: false; readonly ms: number };

/**
 * Receiver side: min(the caller's `X-Request-Timeout-Ms`, our cap). A value ≤ 0 means the caller has
 * already given up. A malformed value (not a canonical whole number, or beyond what a number holds
 * exactly) is ignored and the cap applies: rejecting it with 400 would turn a header typo upstream
 * into an outage.
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
 * Receiver side: the deadline an incoming request leaves us (see `requestBudget`), also aborted by
 * `signal` (the client's disconnect). `null` when the caller has already given up: answer 504 and
 * do no work.
 */
export function incomingDeadline(
  header: string | readonly string[] | undefined,
  capMs: number,
  signal?: AbortSignal,
): Deadline | null {
  const budget = requestBudget(header, capMs);
  return budget.expired ? null : Deadline.after(budget.ms, signal);
}
