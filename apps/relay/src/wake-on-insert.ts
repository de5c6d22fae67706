import { performance } from "node:perf_hooks";
import {
  INSERT_IN_FLIGHT_LOCK,
  OUTBOX_CHANNEL,
  OUTBOX_LOCK_SPACE,
  RELAY_ASLEEP_LOCK,
} from "@outbox/client/internal";
import {
  type BackoffPolicy,
  backoffMs,
  connectionBounds,
  type DatabaseClientConfig,
  isQueryReadTimeout,
  type Logger,
  newDatabaseClient,
} from "@outbox/shared";
import type pg from "pg";

export interface Wakeup {
  /**
   * Called after a claim that left nothing waiting. Resolves at the next insert notification, after
   * `ms` (the fallback poll, or less when a scheduled row is due sooner), or when `signal` aborts — at once if a notification arrived since the last
   * wait, so none is lost while a batch runs, and at once (or after a short recheck delay) while the
   * relay is still announcing its sleep: the caller claims again before it really sleeps. Never later
   * than `ms`, whatever the LISTEN connection does: a server that stopped answering leaves the relay
   * polling.
   */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 5_000 };
/**
 * How soon to claim again while transactions that inserted without notifying are still open: their
 * rows appear when they commit, and nothing else would say so.
 */
const WRITERS_OPEN_RECHECK_MS = 10;

// Announces the sleep (writers checking from now on notify) and reports whether every writer that
// checked before has ended: only then can a claim see all that was inserted without a notification.
const ANNOUNCE_SLEEP = `
  SELECT pg_advisory_lock_shared(${OUTBOX_LOCK_SPACE}, ${RELAY_ASLEEP_LOCK});
  SELECT CASE WHEN pg_try_advisory_lock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK})
    THEN pg_advisory_unlock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK}) ELSE false END AS writers_ended`;
const RECHECK_WRITERS = `
  SELECT CASE WHEN pg_try_advisory_lock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK})
    THEN pg_advisory_unlock(${OUTBOX_LOCK_SPACE}, ${INSERT_IN_FLIGHT_LOCK}) ELSE false END AS writers_ended`;
const WAKE_UP = `SELECT pg_advisory_unlock_shared(${OUTBOX_LOCK_SPACE}, ${RELAY_ASLEEP_LOCK})`;

/** Why the LISTEN connection was given up: the `reason` field of the warning that says so. */
type LossReason =
  | "connect_failed"
  | "connection_error"
  | "connection_ended"
  | "query_unanswered"
  | "query_failed";

/** Whether every writer that inserted without notifying has ended (see `checkWriters`). */
type WritersCheck = "ended" | "open" | "failed";

/**
 * Wakes the relay when rows are inserted, through LISTEN on a dedicated connection: a pooled one would
 * be handed to other queries, and LISTEN belongs to a session. The connection reconnects with backoff;
 * after each (re)connect the relay is woken once, as notifications sent while it was away are gone.
 * `connection` is a URL or a pool's client config (TLS and the client-side bounds included); without
 * one it only polls.
 *
 * Writers notify only while a relay is asleep (migration 0007 says why and how). So the relay sleeps
 * in steps: after an empty claim it announces the sleep on this connection and claims once more; it
 * blocks only after a claim that followed an announcement with every earlier writer ended. On waking
 * it withdraws the announcement, and busy relays cost writers no NOTIFY.
 *
 * A connection can stay open and answer nothing (a frozen or failed-over server, a NAT that forgot the
 * flow): no error, no notification. The sleep handshake's queries are its health check, each bounded
 * by the config's `query_timeout` (and TCP keepalive watches it while it is silent); a query that fails
 * or goes unanswered gives the connection up (a warning with `reason`) and a new one replaces it.
 * Meanwhile no wait lasts longer than the poll interval, so rows are still found by polling.
 */
export function wakeOnInsert(connection: string | DatabaseClientConfig | null, log?: Logger): Wakeup {
  let pending = false;
  let wakeWaiter: (() => void) | undefined;
  let closed = false;
  /** The connection in use (connecting or connected); undefined once given up, until the next. */
  let client: pg.Client | undefined;
  /** `client` once it is LISTENing: only then can the sleep be announced. */
  let listening: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** Reconnects since the last LISTEN that worked. */
  let failedConnects = 0;
  /** This connection holds the asleep lock: writers notify. */
  let announced = false;
  /** Announced, every earlier writer ended, and the caller has claimed since: blocking is safe. */
  let writersEnded = false;
  /** The handshake query not answered yet: a wait does not send another behind it. */
  let checking: Promise<WritersCheck> | undefined;

  const wake = () => {
    pending = true;
    wakeWaiter?.();
  };

  /**
   * Closes a connection without waiting for the server's goodbye, which a server that stopped
   * answering never sends; the session holds nothing but the asleep lock, which ends with it.
   */
  const hangUp = (session: pg.Client): Promise<void> => {
    const ended = session.end().catch(() => {});
    session.connection.stream.destroy();
    return ended;
  };

  /** Gives the current connection up and schedules its replacement; a replaced one is ignored. */
  const lose = (session: pg.Client, reason: LossReason, error: unknown) => {
    if (listening === session) listening = undefined;
    if (client !== session) return;
    client = undefined;
    checking = undefined;
    void hangUp(session);
    if (closed || connection === null) return;
    failedConnects += 1;
    const retryInMs = backoffMs(failedConnects, RECONNECT_BACKOFF);
    // Once per loss: the reconnects that fail after it (a database outage) only at debug.
    log?.[failedConnects === 1 ? "warn" : "debug"](
      { err: error, reason, retryInMs },
      "insert notifications lost; reconnecting",
    );
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect(connection);
    }, retryInMs);
  };

  /** A query on the LISTEN connection; its failure, unanswered included, is the connection's. */
  const ask = <R>(session: pg.Client, text: string): Promise<R> => {
    const reply = session.query(text) as unknown as Promise<R>;
    reply.catch((error: unknown) =>
      lose(session, isQueryReadTimeout(error) ? "query_unanswered" : "query_failed", error),
    );
    return reply;
  };

  const connect = async (to: string | DatabaseClientConfig) => {
    const config = typeof to === "string" ? { connectionString: to, ...connectionBounds({}) } : to;
    const next = newDatabaseClient(config, "relay-listen");
    next.on("notification", wake);
    next.on("error", (error) => lose(next, "connection_error", error));
    next.on("end", () => lose(next, "connection_ended", new Error("LISTEN connection ended")));
    client = next;
    // A new session holds no lock: the sleep is announced again from the start.
    announced = false;
    writersEnded = false;
    try {
      await next.connect();
      await ask(next, `LISTEN ${OUTBOX_CHANNEL}`);
      if (closed || client !== next) {
        await hangUp(next);
        return;
      }
      if (failedConnects > 0) log?.info({ failedConnects }, "insert notifications back");
      failedConnects = 0;
      listening = next;
      wake();
    } catch (error) {
      lose(next, "connect_failed", error);
    }
  };

  if (connection !== null) void connect(connection);

  /** Resolves at a notification, after `ms`, when `signal` aborts or when `until` resolves. */
  const block = (ms: number, signal: AbortSignal, until?: Promise<unknown>) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      let ended = false;
      const done = () => {
        // `until` may resolve after the block ended another way; it must not swallow a later wake-up.
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        if (wakeWaiter === done) wakeWaiter = undefined;
        pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      wakeWaiter = done;
      until?.then(done, done);
    });

  const withdraw = (session: pg.Client) => {
    announced = false;
    writersEnded = false;
    // In order on the connection, before the next announcement; a failure is the connection's.
    ask(session, WAKE_UP).catch(() => {});
  };

  /** Whether every writer that did not notify has ended, announcing the sleep first if need be. */
  const checkWriters = async (session: pg.Client): Promise<WritersCheck> => {
    try {
      let result: pg.QueryResult;
      if (announced) result = await ask<pg.QueryResult>(session, RECHECK_WRITERS);
      else {
        // Two statements in one round trip: pg returns one result for each.
        [, result] = await ask<[pg.QueryResult, pg.QueryResult]>(session, ANNOUNCE_SLEEP);
        if (listening === session) announced = true;
      }
      return result.rows[0]?.writers_ended === true ? "ended" : "open";
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
      if (writersEnded) {
        await block(ms, signal);
        if (listening === session) withdraw(session);
        return;
      }
      if (checking === undefined) {
        const asked: Promise<WritersCheck> = checkWriters(session).finally(() => {
          if (checking === asked) checking = undefined;
        });
        checking = asked;
      }
      let state: WritersCheck | undefined;
      const answered = checking.then((answer) => {
        state = answer;
      });
      // The answer normally comes in a round trip; one that takes longer than the poll interval
      // leaves the caller to claim (poll) meanwhile, and the query's own timeout judges the connection.
      const askedAt = performance.now();
      await block(ms, signal, answered);
      const leftMs = Math.max(0, ms - (performance.now() - askedAt));
      // Ended: the caller's next claim sees every row inserted without a notification, after which
      // it may block. Open: such writers are still open, so look again soon (a notification ends
      // this early). Failed: the connection is gone and reconnects; poll meanwhile.
      if (state === "ended") writersEnded = listening === session;
      else if (state === "open") await block(Math.min(leftMs, WRITERS_OPEN_RECHECK_MS), signal);
      else if (state === "failed") await block(leftMs, signal);
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      wakeWaiter?.();
      const session = client;
      client = undefined;
      listening = undefined;
      if (session) await hangUp(session);
    },
  };
}
