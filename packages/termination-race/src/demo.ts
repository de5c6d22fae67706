/**
 * The source document's demo: propagation 4, work 3 ticks, 4 requests per tick, 2 replicas, pod-1
 * stopped at t=1, 16 ticks; preStop 0 (no wait), 2 (shorter than the propagation), 4 (covers it);
 * grace 1 (shorter than the work), 10 (enough).
 */
export const DEMO = {
  propagation: 4,
  work: 3,
  requestsPerTick: 4,
  replicas: 2,
  stopAt: 1,
  ticks: 16,
  preStops: [0, 2, 4],
  graces: [1, 10],
} as const;
