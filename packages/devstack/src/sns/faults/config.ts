/**
 * One fault rule: what the SNS emulator should do wrong, set at run time through `POST /_faults`.
 * Everything is off by default; an empty object means "behave".
 */
export interface FaultConfig {
  /** Limit every fault below to these SNS actions (e.g. `["PublishBatch"]`); omitted = all actions. */
  actions?: string[];
  /**
   * The rule's scope. With topics, it becomes the rule of each of these topic ARNs and replaces
   * only their previous rules; without, it is the global rule. Test files share one emulator and
   * run in parallel, so a fault suite scopes itself to its own topics to leave the others alone.
   * See {@link FaultRules} for which rule a request gets.
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
  /**
   * A lying endpoint (a proxy, a load balancer's error page): matching calls are NOT executed and are
   * answered HTTP 200 with this body. `empty`: no body at all. `truncated`: the first half of the
   * response the action would have given (for PublishBatch, every entry listed as `Successful`), cut
   * mid-document. `html`: an HTML error page (`content-type: text/html`). Wins over `failureRate`.
   */
  okBody?: OkBody;
  /** Share (0..1) of PublishBatch entries reported as `Failed` with code `InternalError`. */
  batchEntryFailureRate?: number;
  /** PublishBatch entries whose message attribute `attribute` has one of `values` are reported as `Failed`. */
  failBatchEntries?: { attribute: string; values: string[] };
}

export const OK_BODIES = ["empty", "truncated", "html"] as const;
export type OkBody = (typeof OK_BODIES)[number];

/**
 * Every rule the emulator holds (`GET /_faults`). A request on a topic that has a rule of its own
 * gets that rule and only that one (its `actions` included: a topic rule limited to `PublishBatch`
 * leaves the topic's other calls alone even under a global rule). Every other request, and every
 * request without a topic (`ListTopics`, `CreateTopic`, …), gets the global rule, if any.
 */
export interface FaultRules {
  global?: FaultConfig;
  /** One rule per topic ARN, stored without its `topics` field. */
  topics: Record<string, FaultConfig>;
}

/** What `DELETE /_faults` clears, sent as its JSON body; no body at all clears every rule. */
export interface FaultScope {
  /** Clear the rules of these topic ARNs. */
  topics?: string[];
  /** Clear the global rule. */
  global?: boolean;
}

function rate(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !(value >= 0 && value <= 1))
    throw new Error(`${field} must be a number in 0..1`);
  return value;
}

function topicList(value: unknown, nonEmpty: boolean): string[] {
  if (!Array.isArray(value) || !value.every((a) => typeof a === "string")) {
    throw new Error("topics must be an array of topic ARNs");
  }
  // An empty list used to mean "no topic at all"; now it would silently set nothing.
  if (nonEmpty && value.length === 0)
    throw new Error("topics must not be empty (omit it for the global rule)");
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
    "okBody",
  ]);
  for (const key of Object.keys(raw)) if (!known.has(key)) throw new Error(`unknown fault setting: ${key}`);

  const config: FaultConfig = {};
  if (raw.actions !== undefined) {
    if (!Array.isArray(raw.actions) || !raw.actions.every((a) => typeof a === "string")) {
      throw new Error("actions must be an array of action names");
    }
    config.actions = raw.actions;
  }
  if (raw.topics !== undefined) config.topics = topicList(raw.topics, true);
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
  if (raw.okBody !== undefined) {
    if (!OK_BODIES.includes(raw.okBody as OkBody)) {
      throw new Error(`okBody must be one of ${OK_BODIES.map((body) => `'${body}'`).join(", ")}`);
    }
    config.okBody = raw.okBody as OkBody;
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

/** Validates the body of `DELETE /_faults`. */
export function parseFaultScope(input: unknown): FaultScope {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new Error("fault scope must be a JSON object");
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key !== "topics" && key !== "global") throw new Error(`unknown fault scope setting: ${key}`);
  }
  const scope: FaultScope = {};
  if (raw.topics !== undefined) scope.topics = topicList(raw.topics, false);
  if (raw.global !== undefined) {
    if (typeof raw.global !== "boolean") throw new Error("global must be a boolean");
    scope.global = raw.global;
  }
  return scope;
}
