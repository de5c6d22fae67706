import type { Kysely } from "kysely";
import type pg from "pg";
import { settlesWithin } from "../lifecycle/bounded-waits.js";

/**
 * How a database handle closes: Kysely and its pool end, waited for at most `timeoutMs` (resolves
 * `true` when they ended in time); a second call waits for the same close. `pool.end()` waits for
 * every checked-out client, so a client still out when the pool closes, abandoned by a drain that
 * gave up on it on a server that does not answer, is ended rather than waited for.
 */
export function closeWithin<DB>(pool: pg.Pool, db: Kysely<DB>): (timeoutMs: number) => Promise<boolean> {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on("acquire", (client) => checkedOut.add(client));
  pool.on("release", (_error, client) => checkedOut.delete(client));
  pool.on("remove", (client) => checkedOut.delete(client as pg.PoolClient));
  let closing: Promise<void> | undefined;
  return (timeoutMs) => {
    closing ??= (() => {
      const ended = db.destroy();
      // An abandoned client would hold the close (and the stop) until its query_timeout. With a
      // query in flight, end() destroys the socket.
      for (const client of checkedOut) (client as unknown as pg.Client).end().catch(() => {});
      return ended;
    })();
    return settlesWithin(closing, timeoutMs);
  };
}
