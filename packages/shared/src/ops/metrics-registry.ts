import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * prom-client's default gauges whose names end in `_total`, which Prometheus keeps for counters
 * (`promtool check metrics` rejects them). Each is the sum of the same family without the suffix
 * (`nodejs_active_handles{type}` …), so dropping them loses nothing.
 */
const GAUGES_NAMED_AS_COUNTERS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/** A registry per daemon with Node's process metrics (CPU, memory, event-loop lag, handles). */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  for (const name of GAUGES_NAMED_AS_COUNTERS) registry.removeSingleMetric(name);
  return registry;
}
