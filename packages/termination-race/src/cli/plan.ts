import { durationOption, parseCommandLine, usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { EXIT_CRASH } from "@outbox/shared/exit-codes";
import { renderPlan } from "../plan-text.js";
import { DEFAULT_MARGIN_MS, type PlanInput, type PlanMode, plan } from "../planner.js";
import { DEFAULT_TRAFFIC } from "../simulate-stop.js";
import { PLATFORM_DEFAULTS, type Platform, type StopSettings } from "../stop-settings.js";

const usage = `usage: pnpm plan --platform ecs|k8s --propagation D --longest-request D --drain D [--margin D] [--replicas N]
                 [k8s: --pre-stop S --grace S | ecs: --deregistration-delay S --stop-timeout S]
       pnpm plan --platform ecs|k8s --mode worker --drain D [--margin D] [k8s: --pre-stop S --grace S | ecs: --stop-timeout S]

Recommends the stop settings that drop no request and cut no drain, with the reason for each number,
and simulates one replica's stop with the settings you give (the platform's defaults for those you
leave out) beside the recommended ones. A recommendation the platform refuses (a stopTimeout above
Fargate's 120 s) or that still loses work (a single replica) is a failure: one line each on stderr,
exit 1.

  --platform               k8s (endpoint removal and preStop start together) or ecs
  --mode                   service (default: replicas behind a load balancer, e.g. the api) or worker
                           (no load balancer, it takes its own work: the relay, the consumer; only the
                           drain and the time to SIGKILL matter)
  --propagation D          service: how long the endpoint removal takes to reach every router
  --longest-request D      service: the longest request the app serves
  --drain D                the app's whole stop after SIGTERM (its drain timeout plus its exit)
  --margin D               slack before SIGKILL (default ${DEFAULT_MARGIN_MS / 1000}s)
  --replicas N             service: replicas behind the load balancer, one of them stopping (default ${DEFAULT_TRAFFIC.replicas})
  --pre-stop S, --grace S  k8s: preStop sleep and terminationGracePeriodSeconds in use
  --deregistration-delay S, --stop-timeout S
                           ecs: the target group's deregistration delay (service only) and the
                           container's stopTimeout
D: a duration such as 5, 2.5s or 500ms; S, N: whole numbers.`;

const { values, positionals } = parseCommandLine(usage, {
  platform: { type: "string" },
  mode: { type: "string" },
  propagation: { type: "string" },
  "longest-request": { type: "string" },
  drain: { type: "string" },
  margin: { type: "string" },
  replicas: { type: "string" },
  "pre-stop": { type: "string" },
  grace: { type: "string" },
  "deregistration-delay": { type: "string" },
  "stop-timeout": { type: "string" },
});
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

function isPlatform(value: unknown): value is Platform {
  return value === "ecs" || value === "k8s";
}

function modeOf(value: unknown): PlanMode {
  if (value === undefined || value === "service") return "service";
  if (value === "worker") return value;
  return usageError(usage, `--mode must be service or worker, got ${JSON.stringify(value)}`);
}

function requiredDuration(name: string): number {
  return durationOption(usage, name, values[name]) ?? usageError(usage, `--${name} is required`);
}

const settingOptions: Readonly<Record<Platform, readonly string[]>> = {
  k8s: ["pre-stop", "grace"],
  ecs: ["deregistration-delay", "stop-timeout"],
};

/** What a worker has no use for: it leaves no endpoint list and serves no requests. */
const serviceOnly = ["propagation", "longest-request", "replicas", "deregistration-delay"] as const;

function refuseMisplaced(platform: Platform, mode: PlanMode): void {
  const other = platform === "k8s" ? "ecs" : "k8s";
  const wrongPlatform = settingOptions[other].filter((name) => values[name] !== undefined);
  if (wrongPlatform.length > 0) {
    usageError(usage, `--${wrongPlatform.join(", --")} applies to ${other} only, not ${platform}`);
  }
  const wrongMode = mode === "worker" ? serviceOnly.filter((name) => values[name] !== undefined) : [];
  if (wrongMode.length > 0) {
    usageError(
      usage,
      `--${wrongMode.join(", --")} applies to --mode service only: a worker has no load balancer`,
    );
  }
}

function givenSettings(platform: Platform, mode: PlanMode): StopSettings | undefined {
  if (settingOptions[platform].every((name) => values[name] === undefined)) return undefined;
  const setting = (name: string, fallback: number) =>
    wholeNumberOption(usage, name, values[name], fallback, 0);
  if (platform === "k8s") {
    const defaults = PLATFORM_DEFAULTS.k8s;
    return {
      platform,
      preStopSeconds: setting("pre-stop", defaults.preStopSeconds),
      terminationGracePeriodSeconds: setting("grace", defaults.terminationGracePeriodSeconds),
    };
  }
  const defaults = PLATFORM_DEFAULTS.ecs;
  const stopTimeoutSeconds = setting("stop-timeout", defaults.stopTimeoutSeconds);
  if (mode === "worker") return { platform, stopTimeoutSeconds };
  return {
    platform,
    deregistrationDelaySeconds: setting("deregistration-delay", defaults.deregistrationDelaySeconds ?? 0),
    stopTimeoutSeconds,
  };
}

if (!isPlatform(values.platform)) {
  usageError(usage, `--platform must be ecs or k8s, got ${JSON.stringify(values.platform ?? null)}`);
}
const platform: Platform = values.platform;
const mode = modeOf(values.mode);
refuseMisplaced(platform, mode);
const given = givenSettings(platform, mode);
const margin = { marginMs: durationOption(usage, "margin", values.margin) ?? DEFAULT_MARGIN_MS };
const input: PlanInput =
  mode === "worker"
    ? { platform, mode, drainMs: requiredDuration("drain"), ...margin, ...(given ? { given } : {}) }
    : {
        platform,
        mode,
        propagationMs: requiredDuration("propagation"),
        longestRequestMs: requiredDuration("longest-request"),
        drainMs: requiredDuration("drain"),
        ...margin,
        ...(given ? { given } : {}),
        traffic: {
          ...DEFAULT_TRAFFIC,
          replicas: wholeNumberOption(usage, "replicas", values.replicas, DEFAULT_TRAFFIC.replicas),
        },
      };
const result = plan(input);
if (result.problems.length > 0) {
  // No table: beside a failure, its "dropped 0" would read as an answer.
  for (const problem of result.problems) process.stderr.write(`no deployable recommendation: ${problem}\n`);
  process.exit(EXIT_CRASH);
}
process.stdout.write(`${renderPlan(result)}\n`);
