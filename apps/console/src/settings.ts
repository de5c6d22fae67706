import { isIP } from "node:net";
import { dlqCommandProblems, dlqCommandSettings } from "@outbox/consumer/operations";
import { republishSettings, topicRoutingProblems } from "@outbox/relay/operations";
import { type ConfigOf, type ConfigProblem, setting } from "@outbox/shared";

/**
 * What the operator console reads: what `relay republish` reads (the database, SNS and the relay's
 * topic routing, which a republish needs, and the claim-check window, which a requeue obeys too),
 * the consumer's queue and DLQ (optional: without them the console shows the outbox only), and its
 * own listener, authentication and mode.
 */
export const consoleSettings = {
  ...republishSettings,
  // With the log level: every dead letter command's settings are the console's too.
  ...dlqCommandSettings,
  // Optional here (required by `consumer redrive`): a console may watch the outbox alone.
  queueUrl: {
    ...dlqCommandSettings.queueUrl,
    default: "",
    defaultLabel: "*(none)*",
    description:
      "The consumer's queue, where a redrive sends dead letters back. Set it with CONSUMER_DLQ_URL, or neither: the console then shows the outbox only.",
  },
  host: setting.ipAddress({
    env: "CONSOLE_HOST",
    default: "127.0.0.1",
    description:
      "Address the console binds to. Anything but a loopback address needs CONSOLE_TOKEN: the console reads the outbox and moves messages.",
  }),
  port: setting.integer({
    env: "CONSOLE_PORT",
    min: 0,
    max: 65_535,
    default: 4_000,
    description: "Port the console listens on; 0 picks a free one (the URL is logged).",
  }),
  token: setting.string({
    env: "CONSOLE_TOKEN",
    default: "",
    defaultLabel: "*(none)*",
    secret: true,
    description:
      "The secret a browser gives as the password of HTTP basic auth (any user name, logged as who acted), or a script as `Authorization: Bearer`. Required unless CONSOLE_HOST is loopback; at least 16 characters. In ECS or Kubernetes, injected from a secret.",
  }),
  readOnly: setting.boolean({
    env: "CONSOLE_READ_ONLY",
    default: false,
    description:
      "true: the console shows everything and offers no action (requeue, skip, redrive refused with 403).",
  }),
};

export type ConsoleConfig = ConfigOf<typeof consoleSettings>;

/** The shortest token accepted: a guessable secret on a network is no protection. */
export const MIN_TOKEN_LENGTH = 16;

/** Whether `host` is an address whose traffic never leaves the machine. */
export function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/**
 * The console's rules across settings: off loopback it refuses to start without a token (it would
 * hand the outbox and the DLQ to anyone on the network); a DLQ needs its queue, as for `consumer redrive`.
 */
export function consoleProblems(config: ConsoleConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const token = consoleSettings.token.env;
  if (!isLoopback(config.host) && config.token === "") {
    problems.push({
      env: token,
      message: `is required when ${consoleSettings.host.env} is not loopback (got ${config.host}): set a secret, or bind 127.0.0.1`,
    });
  }
  if (config.token !== "" && config.token.length < MIN_TOKEN_LENGTH) {
    problems.push({ env: token, message: `must be at least ${MIN_TOKEN_LENGTH} characters` });
  }
  // Optional: without a topic routing the console shows the republish runs and starts none.
  if (republishes(config)) problems.push(...topicRoutingProblems(config));
  if (config.dlqUrl !== "" && config.queueUrl === "") {
    problems.push({
      env: consoleSettings.queueUrl.env,
      message: `is required with ${consoleSettings.dlqUrl.env}: the queue a redrive sends back to`,
    });
  } else if (config.queueUrl !== "") {
    problems.push(...dlqCommandProblems(config));
  }
  return problems;
}

/** Whether the console can start and resume republish runs: the relay's topic routing is given. */
export function republishes(config: Pick<ConsoleConfig, "topicArns" | "defaultTopicArn">): boolean {
  return Object.keys(config.topicArns).length > 0 || config.defaultTopicArn !== "";
}
