import type { OutboxTables as Database } from "@outbox/client";
import { coalescedRead, SCRAPE_HOLD_MS } from "@outbox/shared";
import { type Kysely, sql } from "kysely";
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { holdsItsKey } from "./dead-heads.js";

/**
 * The names the relay's metrics are served under. Infra forwards `unsent`, `lag`, `blockedKeys` and
 * `topicsInOutage` to CloudWatch and alarms on the last three, the drills read others: they all take
 * the names from here.
 */
export const RELAY_METRICS = {
  unsent: "relay_unsent_events",
  lag: "relay_oldest_unsent_age_seconds",
  published: "relay_published_total",
  failed: "relay_publish_failures_total",
  dead: "relay_dead_total",
  batchSeconds: "relay_batch_duration_seconds",
  publishSeconds: "relay_publish_duration_seconds",
  requestsInFlight: "relay_publish_requests_in_flight",
  requestFailures: "relay_publish_request_failures_total",
  topicsInOutage: "relay_topics_in_outage",
  blockedKeys: "relay_blocked_keys",
} as const;

export type FailureReason = "entry" | "request" | "unsendable";

/**
 * How a PublishBatch failed as a whole: `throttling`, `server` (5xx), `client` (another 4xx: a
 * permission, a deleted topic), `network` (no answer: timeout, connection refused or reset), `malformed`
 * (a 200 that does not parse, or whose lists leave entries out).
 */
export type RequestFailureKind = "throttling" | "server" | "client" | "network" | "malformed";

export interface RelayMetrics {
  readonly published: Counter<"topic">;
  readonly failed: Counter<"reason">;
  readonly dead: Counter<"reason">;
  readonly batchSeconds: Histogram;
  readonly publishSeconds: Histogram;
  readonly requestsInFlight: Gauge;
  readonly requestFailures: Counter<"kind">;
}

interface Backlog {
  unsent: number;
  oldestAgeSeconds: number;
  blockedKeys: number;
}

/**
 * The relay's metrics on `registry`. The backlog gauges are read from the table at scrape time: they
 * are the truth across all replicas, not this process's view of it. One query serves both gauges.
 */
export function createRelayMetrics(
  registry: Registry,
  db: Kysely<Database>,
  outage: { topicsInOutage(): number },
): RelayMetrics {
  // Shared by the gauges of one scrape (and scrapes arriving together), never reused by the next.
  const readBacklog = coalescedRead(async (): Promise<Backlog> => {
    // The blocked keys walk `outbox_dead_heads` (migration 0010), which holds only the dead rows still blocking a key.
    // The lag counts from when a row was due: a scheduled row (`deliver_at`, migration 0012; greatest()
    // skips its NULL) is not late before its time, and one not due yet makes no lag at all (clamped at 0).
    const { rows } = await sql<{ unsent: string; age: number | null; blocked: string }>`
      SELECT count(*) AS unsent,
             greatest(extract(epoch FROM now() - min(greatest(created_at, deliver_at)))::float8, 0) AS age,
             (SELECT count(DISTINCT d.ordering_key) FROM outbox d
              WHERE ${holdsItsKey("d")}
                AND d.ordering_key IS NOT NULL) AS blocked
      FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
    `.execute(db);
    return {
      unsent: Number(rows[0]?.unsent ?? 0),
      oldestAgeSeconds: rows[0]?.age ?? 0,
      blockedKeys: Number(rows[0]?.blocked ?? 0),
    };
  }, SCRAPE_HOLD_MS);
  new Gauge({
    name: RELAY_METRICS.unsent,
    help: "Outbox rows neither published nor dead (all replicas).",
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).unsent);
    },
  });
  new Gauge({
    name: RELAY_METRICS.lag,
    help: "Age of the oldest unsent outbox row, counted from its due time for a scheduled one: the relay's lag (0 when nothing is due).",
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).oldestAgeSeconds);
    },
  });
  new Gauge({
    name: RELAY_METRICS.blockedKeys,
    help: "Ordering keys held up by a dead row (all replicas): their later events wait for requeue-dead or skip-dead.",
    registers: [registry],
    async collect() {
      this.set((await readBacklog()).blockedKeys);
    },
  });
  new Gauge({
    name: RELAY_METRICS.topicsInOutage,
    help: "Topics whose last PublishBatch from this process failed as a whole (SNS down, throttling, timeouts): backing off, spending no attempts.",
    registers: [registry],
    collect() {
      this.set(outage.topicsInOutage());
    },
  });
  return {
    published: new Counter({
      name: RELAY_METRICS.published,
      help: "Events published by this process, by logical topic.",
      labelNames: ["topic"],
      registers: [registry],
    }),
    failed: new Counter({
      name: RELAY_METRICS.failed,
      help: "Failed publishes of single events, by reason (entry, request, unsendable); only entry and unsendable spend an attempt.",
      labelNames: ["reason"],
      registers: [registry],
    }),
    dead: new Counter({
      name: RELAY_METRICS.dead,
      help: "Events marked dead by this process, by reason (attempts, unsendable).",
      labelNames: ["reason"],
      registers: [registry],
    }),
    batchSeconds: new Histogram({
      name: RELAY_METRICS.batchSeconds,
      help: "Claim-to-last-mark time of one batch.",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    publishSeconds: new Histogram({
      name: RELAY_METRICS.publishSeconds,
      help: "Duration of one PublishBatch request.",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    requestsInFlight: new Gauge({
      name: RELAY_METRICS.requestsInFlight,
      help: "PublishBatch requests currently in flight.",
      registers: [registry],
    }),
    requestFailures: new Counter({
      name: RELAY_METRICS.requestFailures,
      help: "PublishBatch requests that failed as a whole, by kind (throttling, server, client, network, malformed).",
      labelNames: ["kind"],
      registers: [registry],
    }),
  };
}
