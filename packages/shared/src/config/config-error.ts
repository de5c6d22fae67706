export interface ConfigProblem {
  /**
   * The setting at fault (or the first of several, for a rule across settings), as its reader
   * names it: the environment variable, or a library's option.
   */
  readonly env: string;
  readonly message: string;
}

/**
 * A problem as one line, the same for every daemon, command and library:
 * `RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")`, `batchSize: must be between 1 and 1000 (got 0)`.
 */
export function problemLine(problem: ConfigProblem): string {
  return `${problem.env}: ${problem.message}`;
}

/** A library's refusal of its options: every problem's line, joined by "; ". */
function problemsLine(problems: readonly ConfigProblem[]): string {
  return problems.map(problemLine).join("; ");
}

/** Throws `refusal(problemsLine(problems))` when there is any problem: a library refusing its options. */
export function refuseOptions(problems: readonly ConfigProblem[], refusal: (line: string) => Error): void {
  if (problems.length > 0) throw refusal(problemsLine(problems));
}

/** Invalid configuration: every problem found, so one start-up reports all of them at once. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map(problemLine).join("\n"));
  }
}

/**
 * What a program prints on stderr before it exits 78: one line per problem, each complete on its
 * own (`relay: config error: RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")`), no stack trace.
 */
export function configErrorText(program: string, error: ConfigError): string {
  return error.problems.map((problem) => `${program}: config error: ${problemLine(problem)}\n`).join("");
}

/**
 * What `resolve` returns; when it throws a ConfigError instead, every problem goes to stderr
 * ({@link configErrorText}) and the result is `undefined`, for a one-shot command to exit 78
 * (EXIT_CONFIG) with. A daemon needs none of this: runDaemon exits 78 itself.
 */
export function reportConfigErrors<T>(program: string, resolve: () => T): T | undefined {
  try {
    return resolve();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(configErrorText(program, error));
    return undefined;
  }
}
