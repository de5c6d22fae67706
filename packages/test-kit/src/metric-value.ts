import type { Registry } from "prom-client";

/**
 * A counter's or gauge's value in `registry`: the sum over its series whose labels include `labels`
 * (every series without them; 0 before the metric has one).
 */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return (metric?.values ?? [])
    .filter((value) => Object.entries(labels).every(([label, wanted]) => value.labels[label] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}
