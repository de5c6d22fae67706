import os from "node:os";
import type { OutboxTables as Database } from "@outbox/client";
import {
  type BackoffPolicy,
  type DatabaseClientConfig,
  type Logger,
  numericOption,
  type Setting,
} from "@outbox/shared";
import type { Kysely } from "kysely";
import type { Registry } from "prom-client";
import { RelayOptionsError } from "./errors.js";
import type { Publisher } from "./publisher.js";
import type { RetentionOptions } from "./retention.js";
import { relaySettings } from "./settings.js";

export interface RelayOptions {
  readonly db: Kysely<Database>;
  readonly publisher: Publisher;
  /**
   * The LISTEN connection's database: a URL, or a pool's `DatabaseHandle.clientConfig`, which carries
   * its TLS settings (the daemon passes that); `null` polls only.
   */
  readonly listenUrl: string | DatabaseClientConfig | null;
  /** Logical topic (the `topic` column) → topic ARN. */
  readonly topicArns?: Readonly<Record<string, string>>;
  /** ARN for topics missing from `topicArns`; without it such rows are dead at once. */
  readonly defaultTopicArn?: string;
  /** Written to `locked_by`; defaults to host, pid and a random suffix. */
  readonly relayId?: string;
  /** RELAY_BATCH_SIZE's default and range (docs/relay.md), like every option read from a setting. */
  readonly batchSize?: number;
  /** As RELAY_LEASE_MS. */
  readonly leaseMs?: number;
  /** Lease time kept back for the batch's final marks; default 5 000 (the statement timeout). */
  readonly leaseMarginMs?: number;
  /** PublishBatch requests in flight, as RELAY_PUBLISH_CONCURRENCY. */
  readonly publishConcurrency?: number;
  /** Batches held at once (one publishing, the rest claimed ahead), as RELAY_PIPELINE_DEPTH. */
  readonly pipelineDepth?: number;
  /** Bound of one PublishBatch with its retries; a timeout is a failed attempt. Default 15 000. */
  readonly publishTimeoutMs?: number;
  /** As RELAY_MAX_ATTEMPTS. */
  readonly maxAttempts?: number;
  /** As RELAY_BACKOFF_BASE_MS and RELAY_BACKOFF_MAX_MS (1 s doubling to 5 min); base ≤ max. */
  readonly backoff?: Partial<BackoffPolicy>;
  /** As RELAY_OUTAGE_BACKOFF_MAX_MS: the cap of a topic's wait after whole-request failures; ≥ backoff.baseMs. */
  readonly outageBackoffMaxMs?: number;
  /** As RELAY_POLL_INTERVAL_MS. */
  readonly pollIntervalMs?: number;
  /** Delete old published rows; `null` (default) keeps them. */
  readonly retention?: RetentionOptions | null;
  readonly log?: Logger;
  /** Where the relay's metrics register; a private registry when omitted. */
  readonly metrics?: Registry;
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RelayOptionsError(`${name} must be a positive integer, got ${value}`);
  return value;
}

const optionsError = (message: string) => new RelayOptionsError(message);

/** Each numeric option and the RELAY_… setting the daemon fills it from (backoff's two aside). */
const optionSettings = {
  batchSize: relaySettings.batchSize,
  leaseMs: relaySettings.leaseMs,
  publishConcurrency: relaySettings.publishConcurrency,
  pipelineDepth: relaySettings.pipelineDepth,
  maxAttempts: relaySettings.maxAttempts,
  outageBackoffMaxMs: relaySettings.outageBackoffMaxMs,
  pollIntervalMs: relaySettings.pollIntervalMs,
} satisfies { [K in keyof RelayOptions]?: Setting<number> };

/** The option as given, checked by its setting's rules, or that setting's default. */
function optionValue(options: RelayOptions, name: keyof typeof optionSettings): number {
  return numericOption(optionSettings[name], options[name], name, optionsError);
}

/**
 * Every option as given, checked by the rules of the RELAY_… setting it mirrors, or that setting's
 * default: a library user is refused what the daemon would refuse.
 */
export function relayOptionValues(options: RelayOptions) {
  const settings = {
    relayId: options.relayId ?? `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`,
    batchSize: optionValue(options, "batchSize"),
    leaseMs: optionValue(options, "leaseMs"),
    leaseMarginMs: options.leaseMarginMs ?? 5_000,
    publishConcurrency: optionValue(options, "publishConcurrency"),
    pipelineDepth: optionValue(options, "pipelineDepth"),
    publishTimeoutMs: positive("publishTimeoutMs", options.publishTimeoutMs ?? 15_000),
    maxAttempts: optionValue(options, "maxAttempts"),
    backoff: {
      baseMs: numericOption(
        relaySettings.backoffBaseMs,
        options.backoff?.baseMs,
        "backoff.baseMs",
        optionsError,
      ),
      maxMs: numericOption(relaySettings.backoffMaxMs, options.backoff?.maxMs, "backoff.maxMs", optionsError),
    },
    outageBackoffMaxMs: optionValue(options, "outageBackoffMaxMs"),
  };
  if (settings.backoff.baseMs > settings.backoff.maxMs) {
    throw new RelayOptionsError(
      `backoff.baseMs (${settings.backoff.baseMs}) must not exceed backoff.maxMs (${settings.backoff.maxMs})`,
    );
  }
  if (settings.backoff.baseMs > settings.outageBackoffMaxMs) {
    throw new RelayOptionsError(
      `backoff.baseMs (${settings.backoff.baseMs}) must not exceed outageBackoffMaxMs (${settings.outageBackoffMaxMs})`,
    );
  }
  if (settings.leaseMarginMs + settings.publishTimeoutMs >= settings.leaseMs) {
    throw new RelayOptionsError(
      "leaseMs must exceed publishTimeoutMs + leaseMarginMs, or no chunk could start",
    );
  }
  return { ...settings, pollIntervalMs: optionValue(options, "pollIntervalMs") };
}
