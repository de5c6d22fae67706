import { collectDefaultMetrics, Registry } from "prom-client";

/** A registry per daemon with Node's process metrics (CPU, memory, event-loop lag, handles). */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
