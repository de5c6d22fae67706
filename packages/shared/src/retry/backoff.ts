export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

/**
 * Delay before retry number `attempt` (1 = first retry): exponential, capped, with "equal jitter" —
 * half fixed, half random — so replicas that failed together do not retry together, yet a retry never
 * comes sooner than half the nominal delay.
 */
export function backoffMs(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}
