import { readFile } from "node:fs/promises";
import { type Kysely, sql } from "kysely";

/**
 * Postgres backends stopped with SIGSTOP: the process and its TCP connection stay, the kernel still
 * acknowledges what the client sends, and nothing is ever answered. That is what a failed-over or
 * frozen server, or a NAT that forgot the flow, looks like to the client, and no error says so.
 */
export interface FrozenBackends {
  readonly pids: readonly number[];
  /** Whether a frozen backend has bytes waiting that it has not read: a query was sent to it. */
  hasUnreadInput(): Promise<boolean>;
  /** SIGCONTs them (idempotent); `thawAllBackends` does it for every frozen one. */
  thaw(): void;
}

/** Every pid this process froze and has not thawed yet. */
const frozen = new Set<number>();

/** SIGCONTs every backend still frozen; call it in `afterEach`, or one frozen backend stalls other files. */
export function thawAllBackends(): void {
  for (const pid of frozen) resume(pid);
}

// A test process that dies with backends frozen would leave the run's shared Postgres half stopped.
process.on("exit", thawAllBackends);

function resume(pid: number): void {
  frozen.delete(pid);
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    // Already gone.
  }
}

interface Backend {
  readonly pid: number;
  readonly serverPort: number;
  readonly clientPort: number;
}

/** How often a backend busy at the freeze is looked at again to catch it idle. */
const IDLE_POLL_MS = 50;

export interface FreezeOptions {
  readonly applicationNames: readonly string[];
  /** Only backends in state `idle`: an idle backend holds no lock other backends could wait on. */
  readonly idleOnly?: boolean;
  /**
   * With `idleOnly`: the backends busy at the call are frozen too, each as soon as it turns idle,
   * for up to this long. Without it a pool that keeps reusing the connections that were busy (pg's
   * pool hands out the most recently released first) may never touch a frozen one.
   */
  readonly busyOnesWithinMs?: number;
}

/**
 * SIGSTOPs the backends of `db`'s database whose `application_name` is one of `applicationNames`,
 * those `idle` only if asked. Resolves once they are stopped (after `busyOnesWithinMs` at most), with
 * no pid when there was none. Connections opened later are not frozen, as after a failover. Needs to
 * run as the server's user or root, on the server's machine.
 */
export async function freezeBackends(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only catalog views are read.
  db: Kysely<any>,
  { applicationNames, idleOnly = false, busyOnesWithinMs = 0 }: FreezeOptions,
): Promise<FrozenBackends> {
  const present = await daemonBackends(db, applicationNames);
  const backends: Backend[] = [];
  const giveUpAt = Date.now() + busyOnesWithinMs;
  let waiting = present;
  for (;;) {
    const ready = idleOnly ? waiting.filter((backend) => backend.idle) : waiting;
    for (const backend of ready) if (stop(backend.pid)) backends.push(backend);
    const stillBusy = new Set(waiting.filter((backend) => !ready.includes(backend)).map((b) => b.pid));
    if (stillBusy.size === 0 || Date.now() >= giveUpAt) break;
    await new Promise((resolve) => setTimeout(resolve, IDLE_POLL_MS));
    // Only the backends there at the call: one opened since is a connection made after the "failover".
    waiting = (await daemonBackends(db, applicationNames)).filter((backend) => stillBusy.has(backend.pid));
  }
  return {
    pids: backends.map((backend) => backend.pid),
    hasUnreadInput: async () => {
      const sockets = await tcpSockets();
      return backends.some((backend) => unreadBytes(sockets, backend) > 0);
    },
    thaw() {
      for (const { pid } of backends) resume(pid);
    },
  };
}

interface SeenBackend extends Backend {
  readonly idle: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: any schema; only catalog views are read.
async function daemonBackends(db: Kysely<any>, applicationNames: readonly string[]): Promise<SeenBackend[]> {
  const { rows } = await sql<{ pid: number; server_port: number; client_port: number; idle: boolean }>`
    SELECT pid, inet_server_port() AS server_port, client_port, state = 'idle' AS idle FROM pg_stat_activity
    WHERE datname = current_database() AND application_name IN (${sql.join([...applicationNames])})
      AND pid <> pg_backend_pid()
  `.execute(db);
  return rows.map((row) => ({
    pid: row.pid,
    serverPort: row.server_port,
    clientPort: row.client_port,
    idle: row.idle,
  }));
}

/** SIGSTOPs one backend; false when it ended meanwhile (its client went away). */
function stop(pid: number): boolean {
  try {
    process.kill(pid, "SIGSTOP");
    frozen.add(pid);
    return true;
  } catch {
    return false;
  }
}

interface TcpSocket {
  readonly localPort: number;
  readonly remotePort: number;
  /** Bytes received and not yet read by the process (rx_queue). */
  readonly unread: number;
}

/** Every TCP socket of the machine, read once from Linux's /proc/net/tcp and tcp6. */
async function tcpSockets(): Promise<TcpSocket[]> {
  const port = (address: string) => Number.parseInt(address.split(":").pop() ?? "", 16);
  const sockets: TcpSocket[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await readFile(table, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const [, local, remote, , queues] = line.trim().split(/\s+/);
      if (!local || !remote || !queues) continue;
      sockets.push({
        localPort: port(local),
        remotePort: port(remote),
        unread: Number.parseInt(queues.split(":")[1] ?? "0", 16),
      });
    }
  }
  return sockets;
}

/** Bytes queued on the server side of a backend's connection. */
function unreadBytes(sockets: readonly TcpSocket[], backend: Backend): number {
  return sockets
    .filter((socket) => socket.localPort === backend.serverPort && socket.remotePort === backend.clientPort)
    .reduce((sum, socket) => sum + socket.unread, 0);
}
