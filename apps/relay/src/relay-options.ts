import os from "node:os";
import type { OutboxTables as Database } from "@outbox/client";
import {
  type BackoffPolicy,
  brokenRules,
  budgetRules,
  type ConfigProblem,
  type DatabaseClientConfig,
  findBudgetProblems,
  type Logger,
  optionValues,
  positiveOption,
  refuseOptions,
  settingDefault,
} from "@outbox/shared";
import type { Kysely } from "kysely";
import type { Registry } from "prom-client";
import { claimBoundMs } from "./claim-bound.js";
import { RelayOptionsError } from "./errors.js";
import type { RetentionOptions } from "./retention.js";
import {
  publishTimeoutMs,
  type RelayConfig,
  type RelayRuleValues,
  relayRules,
  relaySettings,
  relayTimeoutRules,
} from "./settings.js";
import type { Publisher } from "./sns/publisher.js";

/**
 * The numeric options and the RELAY_… setting each is, with its default and range (docs/relay.md):
 * under the same name, but for the backoff's two, which are `backoff.baseMs` and `backoff.maxMs`.
 */
const optionSettings = {
  batchSize: relaySettings.batchSize,
  leaseMs: relaySettings.leaseMs,
  publishConcurrency: relaySettings.publishConcurrency,
  pipelineDepth: relaySettings.pipelineDepth,
  maxAttempts: relaySettings.maxAttempts,
  outageBackoffMaxMs: relaySettings.outageBackoffMaxMs,
  pollIntervalMs: relaySettings.pollIntervalMs,
  claimCheckSendWithinHours: relaySettings.claimCheckSendWithinHours,
  drainTimeoutMs: relaySettings.drainTimeoutMs,
  backoffBaseMs: relaySettings.backoffBaseMs,
  backoffMaxMs: relaySettings.backoffMaxMs,
};

type SettingOption = Exclude<keyof typeof optionSettings, "backoffBaseMs" | "backoffMaxMs">;

/** A value's name as the caller wrote it: the option, the backoff's two inside `backoff`. */
function optionName(key: string): string {
  if (key === "backoffBaseMs") return "backoff.baseMs";
  if (key === "backoffMaxMs") return "backoff.maxMs";
  // The longest a row is held is one publish: a caller's drain may bring any Deadline (RelayRuleValues).
  if (key === "longestHoldMs") return "publishTimeoutMs";
  return key;
}

/**
 * What `createRelay` takes. Every number but `leaseMarginMs` and `publishTimeoutMs` (which the daemon
 * derives from DB_STATEMENT_TIMEOUT_MS and AWS_REQUEST_TIMEOUT_MS × AWS_MAX_ATTEMPTS) is a RELAY_…
 * setting's: refused when the daemon would refuse it, its default when omitted.
 */
export interface RelayOptions extends Partial<Pick<RelayConfig, SettingOption>> {
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

/** Refuses the options, every problem in one line, if there is any. */
const refuseAny = (problems: readonly ConfigProblem[]) =>
  refuseOptions(problems, (line) => new RelayOptionsError(line));

/**
 * Every option as given, or its default, checked by the RELAY_… setting it is (optionValues) and
 * then by the relay's rules across settings (`relayRules`, `relayTimeoutRules`, as the daemon is): a
 * library user is refused what the daemon would refuse. Throws a RelayOptionsError naming the options.
 */
export function relayOptionValues(options: RelayOptions) {
  const { values, problems } = optionValues(
    optionSettings,
    { ...options, backoffBaseMs: options.backoff?.baseMs, backoffMaxMs: options.backoff?.maxMs },
    optionName,
  );
  const leaseMarginMs = options.leaseMarginMs ?? settingDefault(relaySettings.dbStatementTimeoutMs);
  const publishTimeout =
    options.publishTimeoutMs ??
    publishTimeoutMs({
      awsRequestTimeoutMs: settingDefault(relaySettings.awsRequestTimeoutMs),
      awsMaxAttempts: settingDefault(relaySettings.awsMaxAttempts),
    });
  const claimBound =
    options.claimBoundMs ??
    claimBoundMs({
      dbConnectTimeoutMs: settingDefault(relaySettings.dbConnectTimeoutMs),
      dbStatementTimeoutMs: leaseMarginMs,
    });
  refuseAny([
    ...problems,
    ...positiveOption("publishTimeoutMs", publishTimeout),
    ...positiveOption("claimBoundMs", claimBound),
  ]);
  const ruleValues: RelayRuleValues = {
    leaseMs: values.leaseMs,
    leaseMarginMs,
    publishTimeoutMs: publishTimeout,
    backoffBaseMs: values.backoffBaseMs,
    backoffMaxMs: values.backoffMaxMs,
    outageBackoffMaxMs: values.outageBackoffMaxMs,
    // drainTimeoutMs is only drain()'s default: a caller may drain by any Deadline, so the rules
    // count on one publish past the batch's last check, not on a drain budget.
    longestHoldMs: publishTimeout,
  };
  refuseAny([
    ...brokenRules(relayRules, ruleValues, optionName),
    ...findBudgetProblems(budgetRules(relayTimeoutRules, ruleValues, optionName)),
  ]);
  const { backoffBaseMs, backoffMaxMs, ...numbers } = values;
  const backoff: BackoffPolicy = { baseMs: backoffBaseMs, maxMs: backoffMaxMs };
  return {
    ...numbers,
    relayId: options.relayId ?? `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`,
    leaseMarginMs,
    publishTimeoutMs: publishTimeout,
    claimBoundMs: claimBound,
    backoff,
  };
}
