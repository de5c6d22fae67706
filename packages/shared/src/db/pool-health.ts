import { performance } from "node:perf_hooks";
import pg from "pg";

/**
 * What a pool learns from a query left unanswered past `query_timeout`: the server, or the path to
 * it, may be gone. A failover or a frozen server leaves every connection hanging and none erroring,
 * so each idle one would be found out one `query_timeout` at a time. Every connection not answered
 * since that query was sent is suspect instead, and is replaced before the pool hands it out.
 */
export class ConnectionHealth {
  #suspectBefore = Number.NEGATIVE_INFINITY;
  readonly #answeredAt = new WeakMap<pg.Client, number>();

  /** The server answered on `client` (or, for a new client, it was just made). */
  answered(client: pg.Client): void {
    this.#answeredAt.set(client, performance.now());
  }

  /** A query sent at `sentAt` was never answered. */
  unanswered(sentAt: number): void {
    this.#suspectBefore = Math.max(this.#suspectBefore, sentAt);
  }

  isSuspect(client: pg.Client): boolean {
    return (this.#answeredAt.get(client) ?? Number.NEGATIVE_INFINITY) < this.#suspectBefore;
  }
}

/** pg's pool, handing out no connection its {@link ConnectionHealth} suspects: it is closed and another taken. */
export class HealthCheckedPool extends pg.Pool {
  readonly #health: ConnectionHealth;

  constructor(health: ConnectionHealth, config: pg.PoolConfig) {
    super(config);
    this.#health = health;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (
      error: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  override connect(
    callback?: (
      error: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): Promise<pg.PoolClient> | undefined {
    const connecting = this.#connectHealthy();
    if (callback === undefined) return connecting;
    // pg-pool's own pool.query connects this way.
    connecting.then(
      (client) =>
        callback(undefined, client, (release) => client.release(release as boolean | Error | undefined)),
      (error: Error) => callback(error, undefined, () => {}),
    );
    return undefined;
  }

  async #connectHealthy(): Promise<pg.PoolClient> {
    for (;;) {
      const client = await super.connect();
      if (!this.#health.isSuspect(client as unknown as pg.Client)) return client;
      // Destroyed, not returned: the pool opens a new connection in its place.
      client.release(true);
    }
  }
}
