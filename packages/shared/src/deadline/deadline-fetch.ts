import { type Deadline, DeadlineExceededError } from "@outbox/client";

/** The caller's remaining time, in relative milliseconds: hosts' clocks differ, durations do not. */
export const REQUEST_TIMEOUT_HEADER = "X-Request-Timeout-Ms";

/**
 * `fetch` bounded by a deadline: sends the remaining milliseconds in `X-Request-Timeout-Ms` so the
 * callee can stop when the caller has, and aborts the request at the deadline. When no time is left
 * it throws without sending anything: a request nobody will wait for only adds load.
 * There is no `signal` option on purpose: to cancel for another reason, derive the deadline from that
 * signal (`Deadline.after(ms, signal)`), so one signal bounds the call.
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
