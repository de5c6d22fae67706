/**
 * What the SNS emulator should do wrong, set at run time through `POST /_faults`.
 * Everything is off by default; an empty object means "behave".
 */
export interface FaultConfig {
  /** Limit every fault below to these SNS actions (e.g. `["PublishBatch"]`); omitted = all actions. */
  actions?: string[];
  /**
   * Limit every fault to requests on these topic ARNs. Test files share one emulator and run in
   * parallel, so a fault suite scopes itself to its own topics to leave the others alone.
   */
  topics?: string[];
  /** Added before answering each matching call. */
  latencyMs?: number;
  /** Share (0..1) of matching calls answered with an error instead of being executed. */
  failureRate?: number;
  /**
   * `throttling`: HTTP 400 `Throttling`, which the SDK classifies as a throttling error (retried
   * with back-off). `internal-error`: HTTP 500 `InternalError` (typed `InternalErrorException`,
   * a retryable server fault).
   */
  failureMode?: "throttling" | "internal-error";
  /** Matching calls are never answered; they are dropped when the fault is cleared or the server stops. */
  hang?: boolean;
  /** Share (0..1) of PublishBatch entries reported as `Failed` with code `InternalError`. */
  batchEntryFailureRate?: number;
  /** PublishBatch entries whose message attribute `attribute` has one of `values` are reported as `Failed`. */
  failBatchEntries?: { attribute: string; values: string[] };
}

function rate(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !(value >= 0 && value <= 1))
    throw new Error(`${field} must be a number in 0..1`);
  return value;
}

/** Validates a fault document received over HTTP: a typo must fail loudly, not disable the fault. */
export function parseFaultConfig(input: unknown): FaultConfig {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new Error("fault config must be a JSON object");
  }
  const raw = input as Record<string, unknown>;
  const known = new Set([
    "actions",
    "topics",
    "latencyMs",
    "failureRate",
    "failureMode",
    "hang",
    "batchEntryFailureRate",
    "failBatchEntries",
  ]);
  for (const key of Object.keys(raw)) if (!known.has(key)) throw new Error(`unknown fault setting: ${key}`);

  const config: FaultConfig = {};
  if (raw.actions !== undefined) {
    if (!Array.isArray(raw.actions) || !raw.actions.every((a) => typeof a === "string")) {
      throw new Error("actions must be an array of action names");
    }
    config.actions = raw.actions;
  }
  if (raw.topics !== undefined) {
    if (!Array.isArray(raw.topics) || !raw.topics.every((a) => typeof a === "string")) {
      throw new Error("topics must be an array of topic ARNs");
    }
    config.topics = raw.topics;
  }
  if (raw.latencyMs !== undefined) {
    if (typeof raw.latencyMs !== "number" || !(raw.latencyMs >= 0)) throw new Error("latencyMs must be ≥ 0");
    config.latencyMs = raw.latencyMs;
  }
  config.failureRate = rate(raw.failureRate, "failureRate");
  if (raw.failureMode !== undefined) {
    if (raw.failureMode !== "throttling" && raw.failureMode !== "internal-error") {
      throw new Error("failureMode must be 'throttling' or 'internal-error'");
    }
    config.failureMode = raw.failureMode;
  }
  if (raw.hang !== undefined) {
    if (typeof raw.hang !== "boolean") throw new Error("hang must be a boolean");
    config.hang = raw.hang;
  }
  config.batchEntryFailureRate = rate(raw.batchEntryFailureRate, "batchEntryFailureRate");
  if (raw.failBatchEntries !== undefined) {
    const match = raw.failBatchEntries as Record<string, unknown> | null;
    if (
      typeof match !== "object" ||
      match === null ||
      typeof match.attribute !== "string" ||
      !Array.isArray(match.values) ||
      !match.values.every((v) => typeof v === "string")
    ) {
      throw new Error("failBatchEntries must be { attribute: string, values: string[] }");
    }
    config.failBatchEntries = { attribute: match.attribute, values: match.values };
  }
  return JSON.parse(JSON.stringify(config)) as FaultConfig;
}
