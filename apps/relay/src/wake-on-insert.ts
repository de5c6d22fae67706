import {
  type BackoffPolicy,
  backoffMs,
  type DatabaseClientConfig,
  INSERT_IN_FLIGHT_LOCK,
  type Logger,
  OUTBOX_CHANNEL,
  OUTBOX_LOCK_SPACE,
  RELAY_ASLEEP_LOCK,
} from "@outbox/shared";
import pg from "pg";

export interface Wakeup {
  /**
   * Called after a claim that left nothing waiting. Resolves at the next insert notification, after
   * `ms` (the fallback poll), or when `signal` aborts — at once if a notification arrived since the last
   * wait, so none is lost while a batch runs, and at once (or after a short recheck delay) while the
   * relay is still announcing its sleep: the caller claims again before it really sleeps.
   */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 5_000 };
/**
 * How soon to claim again while transactions that inserted without notifying are still open: their
 * rows appear when they commit, and nothing else would say so.
 */
const UNSETTLED_RECHECK_MS = 10;

// Announces the sleep (writers checking from now on notify) and reports whether every writer that
// checked before has ended: only then can a claim see all that was inserted without a notification.
const ANNOUNCE_SLEEP = `
  SELECT pg_advisory_lock_shared(${OUTBOX_LOCK_SPACE}, ${RELAY_ASLEEP_LOCK});
  SELECT CASE WHEN pg_try_advisory_lock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK})
    THEN pg_advisory_unlock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK}) ELSE false END AS settled`;
const RECHECK_SETTLED = `
  SELECT CASE WHEN pg_try_advisory_lock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK})
    THEN pg_advisory_unlock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK}) ELSE false END AS settled`;
const WAKE_UP = `SELECT pg_advisory_unlock_shared(${OUTBOX_LOCK_SPACE}, ${RELAY_ASLEEP_LOCK})`;

/**
 * Wakes the relay when rows are inserted, through LISTEN on a dedicated connection: a pooled one would
 * be handed to other queries, and LISTEN belongs to a session. The connection reconnects with backoff;
 * after each (re)connect the relay is woken once, as notifications sent while it was away are gone.
 * `connection` is a URL or a pool's client config (TLS included); without one it only polls.
 *
 * Writers notify only while a relay is asleep (migration 0007 says why and how). So the relay sleeps
 * in steps: after an empty claim it announces the sleep on this connection and claims once more; it
 * blocks only after a claim that followed an announcement with every earlier writer ended. On waking
 * it withdraws the announcement, and busy relays cost writers no NOTIFY.
 */
export function wakeOnInsert(connection: string | DatabaseClientConfig | null, log?: Logger): Wakeup {
  let pending = false;
  let wakeWaiter: (() => void) | undefined;
  let closed = false;
  let client: pg.Client | undefined;
  /** `client` once it is LISTENing: only then can the sleep be announced. */
  let listening: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** Reconnects since the last LISTEN that worked. */
  let failedConnects = 0;
  /** This connection holds the asleep lock: writers notify. */
  let announced = false;
  /** Announced, every earlier writer ended, and the caller has claimed since: blocking is safe. */
  let settled = false;

  const wake = () => {
    pending = true;
    wakeWaiter?.();
  };

  const scheduleReconnect = (error: unknown) => {
    if (closed || retryTimer) return;
    failedConnects += 1;
    const retryInMs = backoffMs(failedConnects, RECONNECT_BACKOFF);
    log?.warn({ err: error, retryInMs }, "insert notifications lost; reconnecting");
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (connection !== null) void connect(connection);
    }, retryInMs);
  };

  const connect = async (to: string | DatabaseClientConfig) => {
    const config = typeof to === "string" ? { connectionString: to } : to;
    const next = new pg.Client({ ...config, application_name: "relay-listen" });
    next.on("notification", wake);
    // Only the current connection may trigger a reconnect: a replaced one still emits its "end".
    next.on("error", (error) => {
      if (listening === next) listening = undefined;
      void next.end().catch(() => {});
      if (client === next) scheduleReconnect(error);
    });
    next.on("end", () => {
      if (listening === next) listening = undefined;
      if (client === next) scheduleReconnect(new Error("LISTEN connection ended"));
    });
    client = next;
    // A new session holds no lock: the sleep is announced again from the start.
    announced = false;
    settled = false;
    try {
      await next.connect();
      await next.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      failedConnects = 0;
      listening = next;
      wake();
    } catch (error) {
      void next.end().catch(() => {});
      scheduleReconnect(error);
    }
  };

  if (connection !== null) void connect(connection);

  const block = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        wakeWaiter = undefined;
        pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      wakeWaiter = done;
    });

  const withdraw = (session: pg.Client) => {
    announced = false;
    settled = false;
    // In order on the connection, before the next announcement; a failure is the connection's, and
    // its error handler reconnects.
    session.query(WAKE_UP).catch(() => {});
  };

  /** Whether every writer that did not notify has ended, announcing the sleep first if need be. */
  const settle = async (session: pg.Client): Promise<"settled" | "unsettled" | "failed"> => {
    try {
      let result: pg.QueryResult;
      if (announced) result = await session.query(RECHECK_SETTLED);
      else {
        // Two statements in one round trip: pg returns one result for each.
        [, result] = (await session.query(ANNOUNCE_SLEEP)) as unknown as [pg.QueryResult, pg.QueryResult];
        announced = true;
      }
      return result.rows[0]?.settled === true ? "settled" : "unsettled";
    } catch {
      return "failed";
    }
  };

  return {
    async wait(ms, signal) {
      const session = listening;
      if (pending || signal.aborted) {
        pending = false;
        if (announced && session) withdraw(session);
        return;
      }
      if (!session) {
        await block(ms, signal);
        return;
      }
      if (settled) {
        await block(ms, signal);
        if (listening === session) withdraw(session);
        return;
      }
      const state = await settle(session);
      // Settled: the caller's next claim sees every row inserted without a notification, after which
      // it may block. Unsettled: such writers are still open, so look again soon (a notification ends
      // this early). Failed: the connection is gone and reconnects; poll meanwhile.
      if (state === "settled") settled = listening === session;
      else await block(state === "unsettled" ? Math.min(ms, UNSETTLED_RECHECK_MS) : ms, signal);
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      wakeWaiter?.();
      await client?.end().catch(() => {});
    },
  };
}
