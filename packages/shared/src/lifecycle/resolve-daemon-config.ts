import type { commonSettings } from "../config/common-settings.js";
import { ConfigError, type ConfigProblem } from "../config/config-error.js";
import { readConfig } from "../config/load-config.js";
import type { ConfigOf, SettingsSpec } from "../config/setting.js";
import { type BudgetRule, findBudgetProblems, type Timeout } from "../config/timeout-budget.js";

type CommonSettings = typeof commonSettings;

/**
 * A daemon's drain timeout, its own budget rules and the problems of its other checks across
 * settings (pool vs concurrency, base vs max…), derived from its config. Return problems, don't
 * throw: they are reported together with every other one. A problem's message names every variable
 * its check read, so that a check on a variable that did not parse can be left out (see below).
 */
export type DaemonTimeouts<C> = (config: C) => {
  readonly drain: Timeout;
  readonly rules: readonly BudgetRule[];
  readonly problems?: readonly ConfigProblem[];
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

/** Whether a problem's variable or message names `env` (as a whole name: not DB_POOL_MAX in XDB_POOL_MAX). */
function names(problem: ConfigProblem, env: string): boolean {
  return new RegExp(`(?<![A-Z0-9_])${env}(?![A-Z0-9_])`).test(`${problem.env} ${problem.message}`);
}

/**
 * The checks across settings: the daemon's own, then the budget rules (common ones first). Problems
 * in that order, unfiltered; a check that throws a ConfigError (the old way) gives its problems.
 */
function crossChecks<S extends SettingsSpec & CommonSettings>(
  config: ConfigOf<S>,
  timeouts: DaemonTimeouts<ConfigOf<S>>,
): { problems: readonly ConfigProblem[]; resolved?: { drain: Timeout; rules: BudgetRule[] } } {
  try {
    const { drain, rules, problems = [] } = timeouts(config);
    // S extends the common settings, so these keys are present; TypeScript cannot see through ConfigOf<S>.
    const allRules = [...commonTimeoutRules(config as unknown as ConfigOf<CommonSettings>, drain), ...rules];
    return { problems: [...problems, ...findBudgetProblems(allRules)], resolved: { drain, rules: allRules } };
  } catch (error) {
    if (error instanceof ConfigError) return { problems: error.problems };
    throw error;
  }
}

/**
 * Everything a daemon checks before it starts: the settings parse, the daemon's checks across
 * settings pass and every timeout rule holds. Throws one ConfigError listing every problem of all
 * three kinds, so one start-up reports everything there is to fix. runDaemon turns that into exit 78;
 * deployment code (infra/) runs the same check on a task definition's environment at synth time.
 *
 * The checks across settings run even when a variable did not parse: it holds its default
 * meanwhile, and a problem naming it is left out, since it would judge a value the operator never
 * gave (the variable's own problem is reported instead).
 */
export function resolveDaemonConfig<S extends SettingsSpec & CommonSettings>(
  settings: S,
  timeouts: DaemonTimeouts<ConfigOf<S>>,
  env: Readonly<Record<string, string | undefined>>,
): { config: ConfigOf<S>; drain: Timeout; rules: BudgetRule[] } {
  const read = readConfig(settings, env);
  const unparsed = read.problems.map((problem) => problem.env);
  let checked: ReturnType<typeof crossChecks<S>>;
  try {
    checked = crossChecks(read.config, timeouts);
  } catch (error) {
    // A check that cannot cope with a required variable missing: that variable is reported already.
    if (unparsed.length === 0) throw error;
    checked = { problems: [] };
  }
  const problems = [
    ...read.problems,
    ...checked.problems.filter((problem) => !unparsed.some((name) => names(problem, name))),
  ];
  if (problems.length > 0 || checked.resolved === undefined) throw new ConfigError(problems);
  return { config: read.config, ...checked.resolved };
}
