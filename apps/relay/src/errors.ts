/** A library option `createRelay` refuses, with the rule it breaks. */
export class RelayOptionsError extends Error {
  override readonly name = "RelayOptionsError";
}

/**
 * A PublishBatch given up on because its deadline aborted, whether the HTTP handler cut the request
 * or the SDK was waiting between retries: named as the handler's own abort error, so a cut call
 * reads the same either way. The deadline's reason is the cause.
 */
export class PublishAbortedError extends Error {
  override readonly name = "AbortError";
}
