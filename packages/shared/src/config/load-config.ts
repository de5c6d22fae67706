import { ConfigError, type ConfigProblem } from "./config-error.js";
import type { ConfigOf, SettingsSpec } from "./setting.js";

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
    const raw = env[definition.env];
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
    problems.push({ env: definition.env, message: `${reason}${shown}` });
  }
  return { config: config as ConfigOf<S>, problems };
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
