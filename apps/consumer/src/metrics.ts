import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/**
 * How one message ended; `released` means handed back to the queue untouched, not failed: at the stop, or held
 * behind a failed message of its FIFO group.
 */
export type MessageResult = "processed" | "duplicate" | "failed" | "poison" | "released";

export interface ConsumerMetrics {
  readonly received: Counter;
  readonly results: Counter<"result">;
  readonly duplicates: Counter;
  readonly poison: Counter<"kind">;
  readonly handlerSeconds: Histogram<"result">;
  readonly inFlight: Gauge;
  readonly visibilityExtensions: Counter;
  readonly deleteFailures: Counter;
  readonly receiveErrors: Counter;
  readonly databaseUnreachable: Gauge;
  readonly killSwitchTripped: Gauge;
}

/** The names the consumer's metrics are served under; the drills read them from here. */
export const CONSUMER_METRICS = {
  received: "consumer_messages_received_total",
  results: "consumer_messages_total",
  duplicates: "consumer_duplicates_total",
  poison: "consumer_poison_messages_total",
  handlerSeconds: "consumer_handler_duration_seconds",
  inFlight: "consumer_in_flight_messages",
  visibilityExtensions: "consumer_visibility_extensions_total",
  deleteFailures: "consumer_delete_failures_total",
  receiveErrors: "consumer_receive_errors_total",
  databaseUnreachable: "consumer_database_unreachable",
  killSwitchTripped: "consumer_kill_switch_tripped",
} as const;

/** Registers the consumer's metrics on the daemon's registry (served on /metrics by runDaemon). */
export function createConsumerMetrics(registry: Registry): ConsumerMetrics {
  const registers = [registry];
  return {
    received: new Counter({
      name: CONSUMER_METRICS.received,
      help: "Messages received from SQS.",
      registers,
    }),
    results: new Counter({
      name: CONSUMER_METRICS.results,
      help: "Messages settled, by result (processed, duplicate, failed, poison, released).",
      labelNames: ["result"],
      registers,
    }),
    duplicates: new Counter({
      name: CONSUMER_METRICS.duplicates,
      help: "Redeliveries the inbox caught: the event had already been processed, the handler was skipped.",
      registers,
    }),
    poison: new Counter({
      name: CONSUMER_METRICS.poison,
      help: "Undecodable or rejected messages, by kind of problem.",
      labelNames: ["kind"],
      registers,
    }),
    handlerSeconds: new Histogram({
      name: CONSUMER_METRICS.handlerSeconds,
      help: "Inbox transaction time (inbox insert, handler, commit), by result.",
      labelNames: ["result"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    inFlight: new Gauge({
      name: CONSUMER_METRICS.inFlight,
      help: "Messages received and not yet settled.",
      registers,
    }),
    visibilityExtensions: new Counter({
      name: CONSUMER_METRICS.visibilityExtensions,
      help: "Heartbeats: ChangeMessageVisibility calls that kept a slow message's lease ahead of its deadline.",
      registers,
    }),
    deleteFailures: new Counter({
      name: CONSUMER_METRICS.deleteFailures,
      help: "Deletes finally lost after retries (safe: the inbox catches the redelivery).",
      registers,
    }),
    receiveErrors: new Counter({
      name: CONSUMER_METRICS.receiveErrors,
      help: "ReceiveMessage calls that failed (retried after a backoff).",
      registers,
    }),
    databaseUnreachable: new Gauge({
      name: CONSUMER_METRICS.databaseUnreachable,
      help: "1 while the database is unreachable: intake paused, messages handed back without spending attempts, probing until it answers.",
      registers,
    }),
    killSwitchTripped: new Gauge({
      name: CONSUMER_METRICS.killSwitchTripped,
      help: "1 while the kill switch holds intake: too many handlers failed over its window (a dependency down).",
      registers,
    }),
  };
}
