import { isIP } from "node:net";
import { dlqCommandProblems, dlqCommandSettings } from "@outbox/consumer/operations";
import { republishSettings, topicRoutingProblems } from "@outbox/relay/operations";
import { type ConfigOf, type ConfigProblem, setting } from "@outbox/shared";
import { type Operator, parseOperators } from "./operators.js";

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
      "Address the console binds to. Anything but a loopback address needs CONSOLE_TOKEN or CONSOLE_USERS: the console reads the outbox and moves messages.",
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
      "The secret a browser gives as the password of HTTP basic auth (any user name; it names nobody, so no `who` is logged), or a script as `Authorization: Bearer`. Off loopback, this or CONSOLE_USERS is required; at least 16 characters. In ECS or Kubernetes, injected from a secret.",
  }),
  users: setting.string({
    env: "CONSOLE_USERS",
    default: "",
    defaultLabel: "*(none)*",
    secret: true,
    description:
      "The operators, one per line: `name:read-write:password` or `name:read-only:password` (passwords of at least 16 characters). Each logs in with HTTP basic auth; their name is logged as `who` on every action, and a read-only one gets the read-only console. Off loopback, this or CONSOLE_TOKEN is required. In ECS or Kubernetes, injected from a secret.",
  }),
  republishRuns: setting.integer({
    env: "CONSOLE_REPUBLISH_RUNS",
    min: 1,
    max: 20,
    default: 2,
    description:
      "The most republish runs the console works at once, each holding a connection of a pool of their own (the pages keep theirs); one more is refused until a run ends or is stopped.",
  }),
  readOnly: setting.boolean({
    env: "CONSOLE_READ_ONLY",
    default: false,
    description:
      "true: the console shows everything and offers no action (requeue, skip, redrive refused with 403).",
  }),
};

export type ConsoleConfig = ConfigOf<typeof consoleSettings>;

/** CONSOLE_USERS as operators; none when unset (consoleProblems reports a bad list before the start). */
export function operatorsOf(config: Pick<ConsoleConfig, "users">): readonly Operator[] {
  return parseOperators(config.users).operators;
}

/** The shortest token accepted: a guessable secret on a network is no protection. */
export const MIN_TOKEN_LENGTH = 16;

/** Whether `host` is an address whose traffic never leaves the machine. */
export function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/**
 * The console's rules across settings: off loopback it refuses to start without a token or operators (it would
 * hand the outbox and the DLQ to anyone on the network); a DLQ needs its queue, as for `consumer redrive`.
 */
export function consoleProblems(config: ConsoleConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const token = consoleSettings.token.env;
  if (!isLoopback(config.host) && config.token === "" && config.users === "") {
    problems.push({
      env: token,
      message: `is required when ${consoleSettings.host.env} is not loopback (got ${config.host}): set a secret (or ${consoleSettings.users.env}), or bind 127.0.0.1`,
    });
  }
  for (const message of parseOperators(config.users).problems) {
    problems.push({ env: consoleSettings.users.env, message });
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
