import os from "node:os";
import type { OutboxTables as Database } from "@outbox/client";
import {
  type BackoffPolicy,
  type DatabaseClientConfig,
  findBudgetProblems,
  type Logger,
  numericOption,
  type Setting,
} from "@outbox/shared";
import type { Kysely } from "kysely";
import type { Registry } from "prom-client";
import { claimBoundMs } from "./claim-bound.js";
import { RelayOptionsError } from "./errors.js";
import type { RetentionOptions } from "./retention.js";
import { checkRelay, publishTimeoutMs, type RelayConfig, relaySettings } from "./settings.js";
import type { Publisher } from "./sns/publisher.js";

/** The options that are a RELAY_… setting under the same name, with its default and range (docs/relay.md). */
const settingOptions = [
  "batchSize",
  "leaseMs",
  "publishConcurrency",
  "pipelineDepth",
  "maxAttempts",
  "outageBackoffMaxMs",
  "pollIntervalMs",
  "claimCheckSendWithinHours",
  "drainTimeoutMs",
] as const satisfies readonly (keyof RelayConfig)[];

/**
 * What `createRelay` takes. Every number but `leaseMarginMs` and `publishTimeoutMs` (which the daemon
 * derives from DB_STATEMENT_TIMEOUT_MS and AWS_REQUEST_TIMEOUT_MS × AWS_MAX_ATTEMPTS) is a RELAY_…
 * setting's: refused when the daemon would refuse it, its default when omitted.
 */
export interface RelayOptions extends Partial<Pick<RelayConfig, (typeof settingOptions)[number]>> {
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
  /** Lease time kept back for the batch's final marks; default DB_STATEMENT_TIMEOUT_MS's. */
  readonly leaseMarginMs?: number;
  /**
   * Bound of one PublishBatch with its retries; a timeout is a failed attempt. Default
   * AWS_REQUEST_TIMEOUT_MS × AWS_MAX_ATTEMPTS of their defaults.
   */
  readonly publishTimeoutMs?: number;
  /**
   * The longest a claim can take while its timeouts work (claimBoundMs: the daemon's from
   * DB_CONNECT_TIMEOUT_MS and DB_STATEMENT_TIMEOUT_MS); a claim running longer makes `stalled()`
   * say so. Default: from DB_CONNECT_TIMEOUT_MS's default and `leaseMarginMs`.
   */
  readonly claimBoundMs?: number;
  /** As RELAY_BACKOFF_BASE_MS and RELAY_BACKOFF_MAX_MS; base ≤ max, and base ≤ outageBackoffMaxMs. */
  readonly backoff?: Partial<BackoffPolicy>;
  /** Delete old published rows; `null` (default) keeps them. */
  readonly retention?: RetentionOptions | null;
  readonly log?: Logger;
  /** Where the relay's metrics register; a private registry when omitted. */
  readonly metrics?: Registry;
}

const optionsError = (message: string) => new RelayOptionsError(message);

/** The option as given, checked by its setting's own rules, or that setting's default. */
const checked = (definition: Setting<number>, given: number | undefined, name: string) =>
  numericOption(definition, given, name, optionsError);

/** The daemon's default of a setting the library derives an option from. */
const defaultOf = (definition: Setting<number>) => checked(definition, undefined, definition.env);

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RelayOptionsError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * Every option as given, or its default, checked by the RELAY_… setting it is and then by the
 * relay's rules across settings (`checkRelay`, as the daemon is): a library user is refused what
 * the daemon would refuse. Throws a RelayOptionsError naming the option.
 */
export function relayOptionValues(options: RelayOptions) {
  const numbers = Object.fromEntries(
    settingOptions.map((name) => [name, checked(relaySettings[name], options[name], name)]),
  ) as Record<(typeof settingOptions)[number], number>;
  const backoff: BackoffPolicy = {
    baseMs: checked(relaySettings.backoffBaseMs, options.backoff?.baseMs, "backoff.baseMs"),
    maxMs: checked(relaySettings.backoffMaxMs, options.backoff?.maxMs, "backoff.maxMs"),
  };
  const leaseMarginMs = options.leaseMarginMs ?? defaultOf(relaySettings.dbStatementTimeoutMs);
  const publishTimeout = positive(
    "publishTimeoutMs",
    options.publishTimeoutMs ??
      publishTimeoutMs({
        awsRequestTimeoutMs: defaultOf(relaySettings.awsRequestTimeoutMs),
        awsMaxAttempts: defaultOf(relaySettings.awsMaxAttempts),
      }),
  );
  const claimBound = positive(
    "claimBoundMs",
    options.claimBoundMs ??
      claimBoundMs({
        dbConnectTimeoutMs: defaultOf(relaySettings.dbConnectTimeoutMs),
        dbStatementTimeoutMs: leaseMarginMs,
      }),
  );
  const { problems, rules } = checkRelay({
    leaseMs: { env: "leaseMs", value: numbers.leaseMs },
    leaseMarginMs: { env: "leaseMarginMs", value: leaseMarginMs },
    publishTimeoutMs: { env: "publishTimeoutMs", value: publishTimeout },
    backoffBaseMs: { env: "backoff.baseMs", value: backoff.baseMs },
    backoffMaxMs: { env: "backoff.maxMs", value: backoff.maxMs },
    outageBackoffMaxMs: { env: "outageBackoffMaxMs", value: numbers.outageBackoffMaxMs },
  });
  const [problem] = problems;
  if (problem) throw new RelayOptionsError(`${problem.value.env} (${problem.value.value}) ${problem.breaks}`);
  const [budget] = findBudgetProblems(rules);
  if (budget) throw new RelayOptionsError(budget.message);
  return {
    ...numbers,
    relayId: options.relayId ?? `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`,
    leaseMarginMs,
    publishTimeoutMs: publishTimeout,
    claimBoundMs: claimBound,
    backoff,
  };
}
