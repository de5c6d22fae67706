import fs from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type BudgetRule,
  type ConfigOf,
  type ConfigProblem,
  mustNotExceed,
  type Timeout,
} from "@outbox/shared";
import { handlersModuleUrl } from "./load-handlers.js";
import { deliveryProblem } from "./message-delivery.js";
import type { consumerSettings } from "./settings.js";

type ConsumerConfig = ConfigOf<typeof consumerSettings>;

const HOUR_MS = 3_600_000;

/** Checks that are not a sum of timeouts; each message names every variable it reads. */
function otherProblems(config: ConsumerConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (config.concurrency >= config.dbPoolMax) {
    problems.push({
      env: "CONSUMER_CONCURRENCY",
      message: `${config.concurrency} must be less than DB_POOL_MAX (${config.dbPoolMax}): each message holds a connection for its transaction, and the inbox cleanup needs one more`,
    });
  }
  problems.push(
    ...mustNotExceed(
      { env: "CONSUMER_RETRY_BASE_SECONDS", value: config.retryBaseSeconds },
      { env: "CONSUMER_RETRY_MAX_SECONDS", value: config.retryMaxSeconds },
    ),
  );
  const delivery = deliveryProblem(config.delivery, config.topicArns);
  if (delivery !== undefined) problems.push({ env: "CONSUMER_TOPIC_ARNS", message: delivery });
  if (
    config.handlersModule !== "" &&
    !fs.existsSync(fileURLToPath(handlersModuleUrl(config.handlersModule)))
  ) {
    problems.push({ env: "CONSUMER_HANDLERS_MODULE", message: `no such file: ${config.handlersModule}` });
  }
  return problems;
}

/**
 * The consumer's timeout hierarchy, checked by runDaemon before anything starts (together with the
 * common rules: drain + shutdown overhead < STOP_TIMEOUT_MS, statement timeout < drain).
 */
export function consumerTimeouts(config: ConsumerConfig): {
  drain: Timeout;
  rules: BudgetRule[];
  problems: ConfigProblem[];
} {
  const drain: Timeout = { env: "CONSUMER_DRAIN_TIMEOUT_MS", ms: config.drainTimeoutMs };
  const wait: Timeout = { env: "CONSUMER_WAIT_TIME_SECONDS", ms: config.waitTimeSeconds * 1_000 };
  const request: Timeout = { env: "AWS_REQUEST_TIMEOUT_MS", ms: config.awsRequestTimeoutMs };
  const margin: Timeout = { env: "CONSUMER_VISIBILITY_MARGIN_MS", ms: config.visibilityMarginMs };
  const visibility: Timeout = {
    env: "CONSUMER_VISIBILITY_TIMEOUT_SECONDS",
    ms: config.visibilityTimeoutSeconds * 1_000,
  };
  const rules: BudgetRule[] = [
    {
      // The drain is measured from SIGTERM and includes the long poll that is still open then.
      inner: [wait, request],
      outer: drain,
      why: "a long poll open at the stop must return, and its messages be handled or released, within the drain",
    },
    {
      inner: [{ env: "DB_STATEMENT_TIMEOUT_MS", ms: config.dbStatementTimeoutMs }],
      outer: { env: "CONSUMER_HANDLER_TIMEOUT_MS", ms: config.handlerTimeoutMs },
      why: "a statement must give up before the deadline of the message it belongs to",
    },
    {
      inner: [margin, request],
      outer: visibility,
      why: "each lease must outlast the safety margin plus one SQS call, or heartbeats cannot keep it ahead of the deadline",
    },
    {
      inner: [{ env: "CONSUMER_QUEUE_RETENTION_HOURS", ms: config.queueRetentionHours * HOUR_MS }],
      outer: { env: "CONSUMER_INBOX_RETENTION_HOURS", ms: config.inboxRetentionHours * HOUR_MS },
      why: "a redelivery arriving after its inbox row was deleted would be processed twice",
    },
  ];
  // Reported by runDaemon with every other problem (unparsable variables, broken rules), exit 78.
  return { drain, rules, problems: otherProblems(config) };
}
