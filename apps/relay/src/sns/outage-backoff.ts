import { performance } from "node:perf_hooks";
import { type BackoffPolicy, backoffMs } from "@outbox/shared";

interface Outage {
  /** Raises so far: the exponent of the wait. */
  level: number;
  /** `performance.now()` before which the topic gets no request. */
  retryAt: number;
  /** When the level was last raised: requests sent before it fail with it, they are no news. */
  raisedAt: number;
  /** When the first failure came. */
  since: number;
  /** Requests failed in this outage. */
  failedRequests: number;
  /** The failure that raised it, recorded on the rows held back because of it. */
  reason: string;
}

/**
 * Whole-request failures (5xx, throttling, timeouts, connection errors, a 200 that does not parse) say
 * the bus or the way to it is down, not that a row is bad: they spend no attempts, or a long outage
 * would kill the whole backlog. Instead the topic backs off as a whole, per topic ARN (one broken topic
 * does not hold up the others): a failed request sends its rows back to wait, and while a topic waits
 * its rows are sent back unsent. Each failure that is news (its request was sent after the last raise;
 * requests in flight together fail together) doubles the wait, with jitter and capped; the first
 * answered request ends it. The rows' `available_at` carries the wait, so claims skip them meanwhile.
 */
export class OutageBackoff {
  readonly #topics = new Map<string, Outage>();

  constructor(private readonly policy: BackoffPolicy) {}

  /** How long the topic still waits (0: send), and why. */
  waiting(topicArn: string): { waitMs: number; reason: string } {
    const outage = this.#topics.get(topicArn);
    if (!outage) return { waitMs: 0, reason: "" };
    return { waitMs: Math.max(0, outage.retryAt - performance.now()), reason: outage.reason };
  }

  /** A request sent at `sentAt` failed as a whole: how long its rows wait, and whether this began an outage. */
  failed(topicArn: string, sentAt: number, reason: string): { waitMs: number; began: boolean } {
    const now = performance.now();
    const known = this.#topics.get(topicArn);
    const outage = known ?? { level: 0, retryAt: 0, raisedAt: -1, since: now, failedRequests: 0, reason };
    outage.failedRequests += 1;
    if (sentAt >= outage.raisedAt) {
      outage.level += 1;
      outage.raisedAt = now;
      outage.retryAt = now + backoffMs(outage.level, this.policy);
      outage.reason = reason;
    }
    this.#topics.set(topicArn, outage);
    return { waitMs: Math.max(0, outage.retryAt - now), began: known === undefined };
  }

  /** The topic answered a request: its outage, if any, is over; what it was, for the log. */
  answered(topicArn: string): { outageMs: number; failedRequests: number } | undefined {
    const outage = this.#topics.get(topicArn);
    if (!outage) return undefined;
    this.#topics.delete(topicArn);
    return { outageMs: Math.round(performance.now() - outage.since), failedRequests: outage.failedRequests };
  }

  /** Topics whose last request failed as a whole and that have not answered since. */
  topicsInOutage(): number {
    return this.#topics.size;
  }
}
