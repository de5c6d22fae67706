import { ConfigError, type ConfigProblem } from "./config-error.js";
import type { ConfigOf, Setting, SettingsSpec } from "./setting.js";

/** What the environment gave, problems included: `read` keeps going where `loadConfig` would throw. */
export interface ConfigReading<S extends SettingsSpec> {
  /**
   * Every setting; one whose variable is missing or invalid holds its default instead (undefined for a
   * required one), so that checks across settings can still run on the rest.
   */
  readonly config: ConfigOf<S>;
  /** One per variable that is missing or does not parse, in the spec's order. */
  readonly problems: readonly ConfigProblem[];
}

/**
 * Reads every setting from the environment and collects every problem instead of stopping at the
 * first, so an operator fixes a task definition in one go instead of one redeploy per typo.
 */
export function readConfig<S extends SettingsSpec>(
  spec: S,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ConfigReading<S> {
  const problems: ConfigProblem[] = [];
  const config: Record<string, unknown> = {};
  for (const [key, definition] of Object.entries(spec)) {
    config[key] = definition.default;
    const variable = variableRead(definition, env);
    const raw = env[variable];
    if (raw === undefined || raw.trim() === "") {
      if (definition.default === undefined) problems.push({ env: definition.env, message: "is required" });
      continue;
    }
    const parsed = definition.schema.safeParse(raw.trim());
    if (parsed.success) {
      config[key] = parsed.data;
      continue;
    }
    const reason = parsed.error.issues.map((issue) => issue.message).join("; ");
    const shown = definition.secret ? "" : ` (got "${raw}")`;
    problems.push({ env: variable, message: `${reason}${shown}` });
  }
  return { config: config as ConfigOf<S>, problems };
}

function given(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}

/** The variable a setting is read from: its name, or its former name when only that one is set. */
function variableRead(
  definition: Setting<unknown>,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const former = definition.formerEnv;
  return former !== undefined && !given(env[definition.env]) && given(env[former]) ? former : definition.env;
}

/**
 * The renamed variables an environment still sets under their former names, for a daemon to warn
 * about at start-up: they are read for one more release.
 */
export function formerNamesIn(
  spec: SettingsSpec,
  env: Readonly<Record<string, string | undefined>>,
): { readonly former: string; readonly current: string }[] {
  return Object.values(spec)
    .filter((definition) => variableRead(definition, env) !== definition.env)
    .map((definition) => ({ former: definition.formerEnv as string, current: definition.env }));
}

/** Reads every setting from the environment; throws a ConfigError listing every problem. */
export function loadConfig<S extends SettingsSpec>(
  spec: S,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ConfigOf<S> {
  const { config, problems } = readConfig(spec, env);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
