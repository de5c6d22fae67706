/** The AWS SDK's longest sleep between two attempts (MAXIMUM_RETRY_DELAY of its standard retries). */
const SDK_MAX_RETRY_DELAY_MS = 20_000;

export interface ReceiveTimeouts {
  /** AWS_MAX_ATTEMPTS: attempts per call. */
  readonly awsMaxAttempts: number;
  readonly awsConnectionTimeoutMs: number;
  /** AWS_REQUEST_TIMEOUT_MS: the socket's inactivity limit, on top of the long poll's wait. */
  readonly awsRequestTimeoutMs: number;
  readonly waitTimeSeconds: number;
}

/**
 * The longest one receive can take while its timeouts work: each attempt connects (the connection
 * timeout), waits out the long poll and then the request timeout, and the SDK sleeps at most 20 s
 * between attempts. A receive running longer is one no timeout will end (a server that answers a
 * byte at a time, a promise that never resolves): the poll loop has stopped, and `/livez` says so.
 * With the defaults (3 attempts, 3 s, 5 s, a 10 s wait): 3 × 18 s + 2 × 20 s = 94 s.
 */
export function receiveBoundMs(timeouts: ReceiveTimeouts): number {
  const attemptMs =
    timeouts.awsConnectionTimeoutMs + timeouts.waitTimeSeconds * 1_000 + timeouts.awsRequestTimeoutMs;
  return timeouts.awsMaxAttempts * attemptMs + (timeouts.awsMaxAttempts - 1) * SDK_MAX_RETRY_DELAY_MS;
}
