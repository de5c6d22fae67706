export interface ConfigProblem {
  /** The environment variable at fault (or the first of several, for a budget rule). */
  readonly env: string;
  readonly message: string;
}

/** Invalid configuration: every problem found, so one start-up reports all of them at once. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map((problem) => `${problem.env}: ${problem.message}`).join("\n"));
  }
}
