import type { commonSettings } from "../config/common-settings.js";
import { loadConfig } from "../config/load-config.js";
import type { ConfigOf, SettingsSpec } from "../config/setting.js";
import { assertTimeoutBudget, type BudgetRule, type Timeout } from "../config/timeout-budget.js";

type CommonSettings = typeof commonSettings;

/** A daemon's drain timeout and its own budget rules, derived from its config. */
export type DaemonTimeouts<C> = (config: C) => {
  readonly drain: Timeout;
  readonly rules: readonly BudgetRule[];
};

/** The rules every daemon obeys, whatever its own: the drain fits the grace, statements fit the drain. */
export function commonTimeoutRules(config: ConfigOf<CommonSettings>, drain: Timeout): BudgetRule[] {
  const stop: Timeout = { env: "STOP_TIMEOUT_MS", ms: config.stopTimeoutMs };
  const overhead: Timeout = { env: "SHUTDOWN_OVERHEAD_MS", ms: config.shutdownOverheadMs };
  return [
    { inner: [drain, overhead], outer: stop, why: "the drain must end before the platform's SIGKILL" },
    {
      inner: [{ env: "DB_STATEMENT_TIMEOUT_MS", ms: config.dbStatementTimeoutMs }],
      outer: drain,
      why: "a statement must give up before the drain it belongs to",
    },
  ];
}

/**
 * Everything a daemon checks before it starts: the settings parse and every timeout rule holds.
 * Throws a ConfigError listing every problem. runDaemon turns that into exit 78; deployment code
 * (infra/) runs the same check on a task definition's environment at synth time.
 */
export function resolveDaemonConfig<S extends SettingsSpec & CommonSettings>(
  settings: S,
  timeouts: DaemonTimeouts<ConfigOf<S>>,
  env: Readonly<Record<string, string | undefined>>,
): { config: ConfigOf<S>; drain: Timeout; rules: BudgetRule[] } {
  const config = loadConfig(settings, env);
  const { drain, rules } = timeouts(config);
  // S extends the common settings, so these keys are present; TypeScript cannot see through ConfigOf<S>.
  const allRules = [...commonTimeoutRules(config as unknown as ConfigOf<CommonSettings>, drain), ...rules];
  assertTimeoutBudget(allRules);
  return { config, drain, rules: allRules };
}
