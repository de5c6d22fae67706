export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export interface BackoffOptions {
  /**
   * `"equal"` (the default): half the nominal delay fixed, half random, so replicas that failed
   * together do not retry together, yet a retry never comes sooner than half the nominal delay.
   * `"none"`: exactly the nominal delay, where that schedule is documented and relied on as it is.
   */
  readonly jitter?: "equal" | "none";
  readonly random?: () => number;
}

/**
 * Delay before retry number `attempt` (1 = first retry): `baseMs` doubled per attempt, capped at
 * `maxMs`, with the jitter of `options`. Every retry loop of ours waits this, so they all back off alike.
 */
export function backoffMs(attempt: number, policy: BackoffPolicy, options: BackoffOptions = {}): number {
  const nominal = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  if (options.jitter === "none") return nominal;
  const random = options.random ?? Math.random;
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
