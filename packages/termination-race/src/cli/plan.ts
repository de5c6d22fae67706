import { durationOption, parseCommandLine, usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { renderPlan } from "../plan-text.js";
import { DEFAULT_MARGIN_MS, plan } from "../planner.js";
import { PLATFORM_DEFAULTS, type Platform, type StopSettings } from "../stop-settings.js";

const usage = `usage: pnpm plan --platform ecs|k8s --propagation D --longest-request D --drain D [--margin D]
                 [k8s: --pre-stop S --grace S | ecs: --deregistration-delay S --stop-timeout S]

Recommends the stop settings that drop no request and cut no drain, with the reason for each number,
and simulates one replica's stop under steady traffic with the settings you give (the platform's
defaults for those you leave out) beside the recommended ones.

  --platform               k8s (endpoint removal and preStop start together) or ecs (behind an ALB)
  --propagation D          how long the endpoint removal takes to reach every router
  --longest-request D      the longest request the app serves
  --drain D                the app's whole stop after SIGTERM (its drain timeout plus its exit)
  --margin D               slack before SIGKILL (default ${DEFAULT_MARGIN_MS / 1000}s)
  --pre-stop S, --grace S  k8s: preStop sleep and terminationGracePeriodSeconds in use
  --deregistration-delay S, --stop-timeout S
                           ecs: the target group's deregistration delay and the container's stopTimeout
D: a duration such as 5, 2.5s or 500ms; S: whole seconds.`;

const { values, positionals } = parseCommandLine(usage, {
  platform: { type: "string" },
  propagation: { type: "string" },
  "longest-request": { type: "string" },
  drain: { type: "string" },
  margin: { type: "string" },
  "pre-stop": { type: "string" },
  grace: { type: "string" },
  "deregistration-delay": { type: "string" },
  "stop-timeout": { type: "string" },
});
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

function isPlatform(value: unknown): value is Platform {
  return value === "ecs" || value === "k8s";
}

function requiredDuration(name: string): number {
  return durationOption(usage, name, values[name]) ?? usageError(usage, `--${name} is required`);
}

const settingOptions: Readonly<Record<Platform, readonly string[]>> = {
  k8s: ["pre-stop", "grace"],
  ecs: ["deregistration-delay", "stop-timeout"],
};

function givenSettings(platform: Platform): StopSettings | undefined {
  const other = platform === "k8s" ? "ecs" : "k8s";
  const misplaced = settingOptions[other].filter((name) => values[name] !== undefined);
  if (misplaced.length > 0) {
    usageError(usage, `--${misplaced.join(", --")} applies to ${other} only, not ${platform}`);
  }
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
  return {
    platform,
    deregistrationDelaySeconds: setting("deregistration-delay", defaults.deregistrationDelaySeconds),
    stopTimeoutSeconds: setting("stop-timeout", defaults.stopTimeoutSeconds),
  };
}

if (!isPlatform(values.platform)) {
  usageError(usage, `--platform must be ecs or k8s, got ${JSON.stringify(values.platform ?? null)}`);
}
const platform: Platform = values.platform;
const given = givenSettings(platform);
const result = plan({
  platform,
  propagationMs: requiredDuration("propagation"),
  longestRequestMs: requiredDuration("longest-request"),
  drainMs: requiredDuration("drain"),
  marginMs: durationOption(usage, "margin", values.margin) ?? DEFAULT_MARGIN_MS,
  ...(given ? { given } : {}),
});
process.stdout.write(`${renderPlan(result)}\n`);
