import { API_METRICS } from "@outbox/api";
import { CONSUMER_METRICS } from "@outbox/consumer";
import { RELAY_METRICS } from "@outbox/relay";
import type { Daemon } from "./budget.js";

/** A metric forwarded to CloudWatch: its name on /metrics, and its labels, each a dimension next to `service`. */
export interface ForwardedMetric {
  readonly name: string;
  readonly labels: readonly string[];
}

/**
 * Histograms are not forwarded. The collector would write one as a CloudWatch statistic set whose
 * Min and Max are 0 (a Prometheus histogram carries neither) and from which CloudWatch computes no
 * percentile, so only its average would be true. The api's latency is the ALB's TargetResponseTime
 * (with its p99 alarm); the relay's and the consumer's timings are their spans in X-Ray, and every
 * bucket stays on /metrics for a Prometheus that scrapes it.
 */
const HISTOGRAM = "histogram";

/** The labels of a counter or gauge (each becomes a dimension), or `HISTOGRAM`: not forwarded. */
type Forwarding = readonly string[] | typeof HISTOGRAM;

/**
 * Keyed like the daemon's names constant, so a metric added there fails the typecheck here until it
 * is classified. The labels are each metric's `labelNames` in apps/<daemon>/src/metrics.ts (the
 * infra tests compare them): awsemf drops a metric whose declared dimensions it does not carry.
 */
function forwarded<Key extends string>(
  names: Readonly<Record<Key, string>>,
  forwarding: Readonly<Record<Key, Forwarding>>,
): ForwardedMetric[] {
  return (Object.keys(names) as Key[]).flatMap((key): ForwardedMetric[] => {
    const labels: Forwarding = forwarding[key];
    return typeof labels === "string" ? [] : [{ name: names[key], labels }];
  });
}

/** What each daemon's collector sidecar forwards from its /metrics to CloudWatch. */
export const FORWARDED_METRICS: Readonly<Record<Daemon, readonly ForwardedMetric[]>> = {
  relay: forwarded(RELAY_METRICS, {
    unsent: [],
    lag: [],
    published: ["topic"],
    failed: ["reason"],
    dead: ["reason"],
    batchSeconds: HISTOGRAM,
    publishSeconds: HISTOGRAM,
    requestsInFlight: [],
    requestFailures: ["kind"],
    topicsInOutage: [],
    blockedKeys: [],
  }),
  consumer: forwarded(CONSUMER_METRICS, {
    received: [],
    results: ["result"],
    duplicates: [],
    poison: ["kind"],
    handlerSeconds: HISTOGRAM,
    inFlight: [],
    visibilityExtensions: [],
    deleteFailures: [],
    receiveErrors: [],
    databaseUnreachable: [],
    killSwitchTripped: [],
  }),
  api: forwarded(API_METRICS, {
    gearLinksPending: [],
    requests: ["route", "status"],
    requestSeconds: HISTOGRAM,
    inFlight: [],
    gearLinks: ["outcome"],
    reconciled: ["outcome"],
  }),
};
