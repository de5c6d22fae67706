import { findBudgetProblems, type Logger } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import { PhotoServerOptionsError } from "./errors.js";
import type { ApiMetrics } from "./metrics.js";
import type { PostPhoto } from "./post-photo.js";
import { type ApiConfig, apiSettings, checkApi } from "./settings.js";

/** The server's timeouts: the API_… settings of the same names (docs/api.md), read by the daemon. */
export type PhotoServerTimeouts = Pick<
  ApiConfig,
  "headersTimeoutMs" | "handlerTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs"
>;

export interface PhotoServerOptions extends Partial<PhotoServerTimeouts> {
  /** The pg pool (DatabaseHandle.pool): GET /photos/:id reads on a client bounded by its deadline. */
  readonly pool: PostgresPool;
  /** What POST /photos does once its body is valid: `postPhoto` bound to its dependencies. */
  readonly postPhoto: PostPhoto;
  readonly metrics: ApiMetrics;
  readonly log: Logger;
}

const timeoutNames = [
  "headersTimeoutMs",
  "handlerTimeoutMs",
  "requestTimeoutMs",
  "keepAliveTimeoutMs",
] as const satisfies readonly (keyof PhotoServerTimeouts)[];

/** The option as given, or its setting's default. */
function timeoutOrDefault(options: PhotoServerOptions, name: keyof PhotoServerTimeouts): number {
  const value = options[name] ?? apiSettings[name].default;
  if (value === undefined) throw new Error(`${apiSettings[name].env} has no default`);
  return value;
}

/**
 * The server's timeouts, each the option given or its setting's default, checked by the daemon's
 * own rules (`checkApi`): a value the daemon refuses at start-up is refused here too, for the same
 * reason. Throws a PhotoServerOptionsError naming every option at fault.
 */
export function photoServerTimeouts(options: PhotoServerOptions): PhotoServerTimeouts {
  const timeouts = Object.fromEntries(
    timeoutNames.map((name) => [name, timeoutOrDefault(options, name)]),
  ) as Record<keyof PhotoServerTimeouts, number>;
  const { rules, problems } = checkApi(timeouts);
  const found = [...problems, ...findBudgetProblems(rules)];
  if (found.length === 0) return timeouts;
  const optionOf = (env: string) => timeoutNames.find((name) => apiSettings[name].env === env) ?? env;
  throw new PhotoServerOptionsError(
    `createPhotoServer refuses its options: ${found
      .map((problem) => `${optionOf(problem.env)} (${problem.env}): ${problem.message}`)
      .join("; ")}`,
  );
}
