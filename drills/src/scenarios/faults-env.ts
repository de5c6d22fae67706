import { relaySettings } from "@outbox/relay";
import { backoffMs } from "@outbox/shared";
import { quickConsumerVisibility, quickRelayLeases } from "./fast-recovery-env.js";

/*
 * The daemons' settings in the faults drill: short bounds, so that a fault the daemons handle is
 * noticed and survived within seconds, and a stop's budget is small enough to be exceeded
 * visibly. Every timeout budget rule still holds with these values.
 */

/** Time reserved after each daemon's drain; the stop budget is drain + this. */
const SHUTDOWN_OVERHEAD_MS = 2_000;

/**
 * The relay's retry timing runs this many times faster than its defaults, so a real outage of
 * seconds is, for the relay's attempts and backoff, one of minutes.
 */
export const TIME_SCALE = 100;

const defaultBackoff = {
  baseMs: relaySettings.backoffBaseMs.default ?? 1_000,
  maxMs: relaySettings.backoffMaxMs.default ?? 300_000,
};
const defaultMaxAttempts = relaySettings.maxAttempts.default ?? 10;

/**
 * The longest a row's RELAY_MAX_ATTEMPTS publishes can be spread over at default timing: the
 * un-jittered backoff before every retry. An outage longer than this, counted as the row's own
 * attempts, kills the row whatever the jitter.
 */
export function defaultAttemptSpanMs(): number {
  let span = 0;
  for (let retry = 1; retry < defaultMaxAttempts; retry++) {
    span += backoffMs(retry, defaultBackoff, { jitter: "none" });
  }
  return span;
}

/**
 * An unanswered query is given up at DB_STATEMENT_TIMEOUT_MS + DB_CONNECT_TIMEOUT_MS: 1 s + 2 s
 * leaves a frozen connection's replacement well inside the 8 s freeze, as at 1 s + the default 5 s
 * it would not on a loaded machine.
 */
const DB_CONNECT_TIMEOUT_MS = "2000";

export const faultRelayEnv: Record<string, string> = {
  ...quickRelayLeases,
  DB_CONNECT_TIMEOUT_MS,
  RELAY_BACKOFF_BASE_MS: String(defaultBackoff.baseMs / TIME_SCALE),
  RELAY_BACKOFF_MAX_MS: String(defaultBackoff.maxMs / TIME_SCALE),
  // One SDK attempt per publish: the SDK's own retry delays are not scaled, the relay's are.
  AWS_MAX_ATTEMPTS: "1",
  SHUTDOWN_OVERHEAD_MS: String(SHUTDOWN_OVERHEAD_MS),
};

export const faultConsumerEnv: Record<string, string> = {
  ...quickConsumerVisibility,
  DB_STATEMENT_TIMEOUT_MS: "1000",
  DB_CONNECT_TIMEOUT_MS,
  CONSUMER_HANDLER_TIMEOUT_MS: "4000",
  // Past the default long poll (10 s) + AWS_REQUEST_TIMEOUT_MS (2 s): the poll open at a stop returns within the drain.
  CONSUMER_DRAIN_TIMEOUT_MS: "13000",
  CONSUMER_RETRY_BASE_SECONDS: "1",
  CONSUMER_RETRY_MAX_SECONDS: "4",
  SHUTDOWN_OVERHEAD_MS: String(SHUTDOWN_OVERHEAD_MS),
  DRILL_HANDLER_MS: "20",
};

export const faultApiEnv: Record<string, string> = {
  DB_STATEMENT_TIMEOUT_MS: "1000",
  DB_CONNECT_TIMEOUT_MS,
  API_EQUIPMENT_TIMEOUT_MS: "1000",
  API_HEADERS_TIMEOUT_MS: "2000",
  API_HANDLER_TIMEOUT_MS: "3000",
  API_REQUEST_TIMEOUT_MS: "4000",
  API_DRAIN_TIMEOUT_MS: "3000",
  SHUTDOWN_OVERHEAD_MS: String(SHUTDOWN_OVERHEAD_MS),
};

/** What each daemon's stop may take under these settings: its drain timeout plus its overhead. */
export const stopBudgetMs = {
  relay: Number(faultRelayEnv.RELAY_DRAIN_TIMEOUT_MS) + SHUTDOWN_OVERHEAD_MS,
  consumer: Number(faultConsumerEnv.CONSUMER_DRAIN_TIMEOUT_MS) + SHUTDOWN_OVERHEAD_MS,
  api: Number(faultApiEnv.API_DRAIN_TIMEOUT_MS) + SHUTDOWN_OVERHEAD_MS,
} as const;
