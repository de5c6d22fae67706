import { ConfigError, type ConfigProblem } from "./config-error.js";
import type { ConfigOf, SettingsSpec } from "./setting.js";

/**
 * Reads every setting from the environment. Collects all problems before failing, so an operator
 * fixes a task definition in one go instead of one redeploy per typo.
 */
export function loadConfig<S extends SettingsSpec>(
  spec: S,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ConfigOf<S> {
  const problems: ConfigProblem[] = [];
  const config: Record<string, unknown> = {};
  for (const [key, definition] of Object.entries(spec)) {
    const raw = env[definition.env];
    if (raw === undefined || raw.trim() === "") {
      if (definition.default === undefined) problems.push({ env: definition.env, message: "is required" });
      else config[key] = definition.default;
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
  if (problems.length > 0) throw new ConfigError(problems);
  return config as ConfigOf<S>;
}
