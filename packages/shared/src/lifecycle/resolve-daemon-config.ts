import type { commonSettings } from "../config/common-settings.js";
import { ConfigError, type ConfigProblem } from "../config/config-error.js";
import { readConfig } from "../config/load-config.js";
import type { ConfigOf, SettingsSpec } from "../config/setting.js";
import { environmentWith, type SettingsInCode } from "../config/settings-in-code.js";
import { type BudgetRule, findBudgetProblems, type Timeout } from "../config/timeout-budget.js";
import { databaseTlsProblems } from "../db/database-tls.js";
import { tracingConfigProblems } from "../telemetry/tracing-config.js";

type CommonSettings = typeof commonSettings;

/**
 * A daemon's drain timeout, its own budget rules and the problems of its other checks across
 * settings (pool vs concurrency, base vs max…), derived from its config: see {@link ConfigChecks}.
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

/** The settings the TLS check reads: every program that opens the database has them. */
type DatabaseTlsSettings = Pick<CommonSettings, "databaseUrl" | "dbSslMode" | "dbSslCaFile">;

/**
 * A program's checks across settings (pool vs concurrency, base vs max, budget rules…). Return
 * problems, don't throw: they are reported together with every other one. A problem's message
 * names every variable its check read, so that a check on a variable that did not parse can be
 * left out (see {@link resolveConfig}).
 */
export type ConfigChecks<C> = (config: C) => readonly ConfigProblem[];

/** The checks' problems; a check that throws a ConfigError (the old way) gives its problems. */
function runChecks<C>(checks: ConfigChecks<C>, config: C): readonly ConfigProblem[] {
  try {
    return checks(config);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/**
 * Everything a program that opens the database checks before it starts, daemon or one-shot
 * command: its settings parse, the TLS settings can work (DB_SSL_MODE, DB_SSL_CA_FILE, which is
 * read, and the URL's TLS parameters: what createDatabase would refuse) and its own `checks` pass.
 * Throws one ConfigError listing every problem of all three kinds, in that order, so one start
 * reports everything there is to fix; print it with configErrorText and exit 78.
 *
 * The checks run even when a variable did not parse: it holds its default meanwhile, and a problem
 * of `checks` naming it is left out, since it would judge a value the operator never gave (the
 * variable's own problem is reported instead).
 */
export function resolveConfig<S extends SettingsSpec & DatabaseTlsSettings>(
  settings: S,
  checks: ConfigChecks<ConfigOf<S>>,
  env: Readonly<Record<string, string | undefined>>,
): ConfigOf<S> {
  const read = readConfig(settings, env);
  const unparsed = read.problems.map((problem) => problem.env);
  // S has the TLS settings, so these keys are present; TypeScript cannot see through ConfigOf<S>.
  const tls = read.config as unknown as ConfigOf<DatabaseTlsSettings>;
  // A DB_SSL_MODE that did not parse leaves the mode unknown: check only what holds whatever the
  // mode (the URL's other TLS parameters), as `disable` does, reading neither the URL's sslmode nor
  // the CA bundle. (A DATABASE_URL that did not parse has no parameters to check.)
  const modeUnknown = unparsed.includes(settings.dbSslMode.env);
  const tlsProblems = databaseTlsProblems(tls.databaseUrl, {
    mode: modeUnknown ? "disable" : tls.dbSslMode,
    caFile: tls.dbSslCaFile,
  });
  let checked: readonly ConfigProblem[];
  try {
    checked = runChecks(checks, read.config);
  } catch (error) {
    // A check that cannot cope with a required variable missing: that variable is reported already.
    if (unparsed.length === 0) throw error;
    checked = [];
  }
  const problems = [
    ...read.problems,
    ...tlsProblems,
    ...checked.filter((problem) => !unparsed.some((name) => names(problem, name))),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return read.config;
}

/** The daemon's drain, its rules (common ones first) and the problems of its checks, rules included. */
function daemonChecks<S extends SettingsSpec & CommonSettings>(
  config: ConfigOf<S>,
  timeouts: DaemonTimeouts<ConfigOf<S>>,
): { drain: Timeout; rules: BudgetRule[]; problems: readonly ConfigProblem[] } {
  const { drain, rules, problems = [] } = timeouts(config);
  // S extends the common settings, so these keys are present; TypeScript cannot see through ConfigOf<S>.
  const allRules = [...commonTimeoutRules(config as unknown as ConfigOf<CommonSettings>, drain), ...rules];
  return { drain, rules: allRules, problems: [...problems, ...findBudgetProblems(allRules)] };
}

/**
 * Everything a daemon checks before it starts ({@link resolveConfig}), its checks being its own
 * and then every timeout rule (common ones first). `settingsInCode` (runRelay's and runConsumer's
 * `settings`) go over `env` and are read as it is; a key that is no setting is a problem too.
 * runDaemon turns the ConfigError into exit 78; deployment code (infra/) runs the same check on a
 * task definition's environment at synth time. `env` is the environment read, settings in code included.
 */
export function resolveDaemonConfig<S extends SettingsSpec & CommonSettings>(
  settings: S,
  timeouts: DaemonTimeouts<ConfigOf<S>>,
  environment: Readonly<Record<string, string | undefined>>,
  settingsInCode: SettingsInCode = {},
): {
  config: ConfigOf<S>;
  drain: Timeout;
  rules: BudgetRule[];
  env: Readonly<Record<string, string | undefined>>;
} {
  const { env, problems: notSettings } = environmentWith(settings, settingsInCode, environment);
  // The daemon's checks run once (a handlers module's existence among them): on the config that
  // resolveConfig returns, which is the one they were given when nothing failed.
  let checked: ReturnType<typeof daemonChecks> | undefined;
  // The OTEL_* variables are the SDK's, not settings; the one they can get wrong for good is checked here.
  const config = resolveConfig(
    settings,
    (parsed) => {
      checked = daemonChecks(parsed, timeouts);
      return [...notSettings, ...checked.problems, ...tracingConfigProblems(env)];
    },
    env,
  );
  const { drain, rules } = checked ?? daemonChecks(config, timeouts);
  return { config, drain, rules, env };
}
