import { type DatabaseClientConfig, type Logger, OUTBOX_CHANNEL } from "@outbox/shared";
import pg from "pg";

export interface Wakeup {
  /**
   * Resolves at the next insert notification, after `ms` (the fallback poll), or when `signal` aborts —
   * at once if a notification arrived since the last wait, so none is lost while a batch runs.
   */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * Wakes the relay when rows are inserted, through LISTEN on a dedicated connection: a pooled one would
 * be handed to other queries, and LISTEN belongs to a session. The connection reconnects with backoff;
 * after each (re)connect the relay is woken once, as notifications sent while it was away are gone.
 * `connection` is a URL or a pool's client config (TLS included); without one it only polls.
 */
export function wakeOnInsert(connection: string | DatabaseClientConfig | null, log?: Logger): Wakeup {
  let pending = false;
  let wakeWaiter: (() => void) | undefined;
  let closed = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = RECONNECT_MIN_MS;

  const wake = () => {
    pending = true;
    wakeWaiter?.();
  };

  const scheduleReconnect = (error: unknown) => {
    if (closed || retryTimer) return;
    log?.warn({ err: error, retryInMs: retryMs }, "insert notifications lost; reconnecting");
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (connection !== null) void connect(connection);
    }, retryMs);
    retryMs = Math.min(retryMs * 2, RECONNECT_MAX_MS);
  };

  const connect = async (to: string | DatabaseClientConfig) => {
    const config = typeof to === "string" ? { connectionString: to } : to;
    const next = new pg.Client({ ...config, application_name: "relay-listen" });
    next.on("notification", wake);
    // Only the current connection may trigger a reconnect: a replaced one still emits its "end".
    next.on("error", (error) => {
      void next.end().catch(() => {});
      if (client === next) scheduleReconnect(error);
    });
    next.on("end", () => {
      if (client === next) scheduleReconnect(new Error("LISTEN connection ended"));
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      retryMs = RECONNECT_MIN_MS;
      wake();
    } catch (error) {
      void next.end().catch(() => {});
      scheduleReconnect(error);
    }
  };

  if (connection !== null) void connect(connection);

  return {
    wait(ms, signal) {
      if (pending || signal.aborted) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
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
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      wakeWaiter?.();
      await client?.end().catch(() => {});
    },
  };
}
