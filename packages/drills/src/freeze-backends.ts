import pg from "pg";

/** Postgres backends stopped with SIGSTOP: they keep their sockets open and answer nothing. */
export interface FrozenBackends {
  readonly pids: readonly number[];
  /** SIGCONT to every one of them; safe to call twice. */
  thaw(): void;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    // A backend that ended meanwhile (its client went away) has nothing left to freeze or thaw.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * Freezes the backends of one database whose `application_name` is one of `names`, found in
 * `pg_stat_activity`: what a hung TCP connection (an RDS failover, a NAT idle timeout) looks like
 * to the daemon holding it — open, silent, never an error. Connections opened later are not
 * frozen, as after a failover. Needs to run as the server's user or root, on the server's machine.
 *
 * A stopped backend holds whatever it held (locks, a transaction): if this process exits with them
 * still frozen, the exit hook thaws them, so the server can still be stopped.
 */
export async function freezeBackends(
  adminUrl: string,
  database: string,
  names: readonly string[],
): Promise<FrozenBackends> {
  const admin = new pg.Client({ connectionString: adminUrl, application_name: "drill-freeze" });
  await admin.connect();
  let pids: number[];
  try {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = ANY($2) AND pid <> pg_backend_pid()",
      [database, names],
    );
    pids = rows.map((row) => row.pid);
  } finally {
    await admin.end();
  }
  let frozen = true;
  const thaw = () => {
    if (!frozen) return;
    frozen = false;
    process.off("exit", thaw);
    for (const pid of pids) signal(pid, "SIGCONT");
  };
  process.on("exit", thaw);
  try {
    for (const pid of pids) signal(pid, "SIGSTOP");
  } catch (error) {
    thaw();
    throw error;
  }
  return { pids, thaw };
}
