import {
  type ConfigProblem,
  findBudgetProblems,
  type Logger,
  optionValues,
  refuseOptions,
} from "@outbox/shared";
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

/** Each option and the API_… setting it is: its range and default are that setting's. */
const timeoutSettings = {
  headersTimeoutMs: apiSettings.headersTimeoutMs,
  handlerTimeoutMs: apiSettings.handlerTimeoutMs,
  requestTimeoutMs: apiSettings.requestTimeoutMs,
  keepAliveTimeoutMs: apiSettings.keepAliveTimeoutMs,
} satisfies { [K in keyof PhotoServerTimeouts]: unknown };

/** Refuses the options, every problem in one line, if there is any. */
const refuseAny = (problems: readonly ConfigProblem[]) =>
  refuseOptions(
    problems,
    (line) => new PhotoServerOptionsError(`createPhotoServer refuses its options: ${line}`),
  );

/**
 * The server's timeouts, each the option given or its setting's default, checked by its setting
 * and then by the daemon's own rules (`checkApi`): a value the daemon refuses at start-up is
 * refused here too, for the same reason. Throws a PhotoServerOptionsError naming every option at fault.
 */
export function photoServerTimeouts(options: PhotoServerOptions): PhotoServerTimeouts {
  const { values, problems } = optionValues(timeoutSettings, options);
  refuseAny(problems);
  const { rules, problems: broken } = checkApi(values, (option) => option);
  refuseAny([...broken, ...findBudgetProblems(rules)]);
  return values;
}
