/**
 * Node enforces an HTTP server's `headersTimeout` and `requestTimeout` only when it sweeps its
 * connections, every `connectionsCheckingInterval` (30 s by default): a 5 s headers timeout holds
 * for 26–30 s in fact, and a slowloris client keeps its socket that long. Five sweeps per headers
 * timeout close such a connection at most a fifth past its limit (about a second at 5 s).
 */
const SWEEPS_PER_HEADERS_TIMEOUT = 5;

/** The `connectionsCheckingInterval` that makes `headersTimeoutMs` (and the request timeout) hold. */
export function connectionsCheckingInterval(headersTimeoutMs: number): number {
  return Math.max(1, Math.floor(headersTimeoutMs / SWEEPS_PER_HEADERS_TIMEOUT));
}
