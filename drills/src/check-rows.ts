/**
 * Every row a drill can put in the acceptance table, by key: its check column, with what the drill
 * measured or was configured with as `{placeholders}`. The checkers fill these in (`checkName`),
 * `runDrills` holds each run to the rows its drill declares, and the README's table is compared
 * with them (test/docs/readme-table.test.ts), so a row cannot change or vanish in one place only.
 */
export const CHECK_ROWS = {
  httpSigterm: "HTTP: {inFlight} requests in flight (each held {hold} before its commit), SIGTERM",
  httpSigkill: "same with SIGKILL (comparison, {inFlight} in flight)",
  relaySigterm: "relay: {total} events queued, SIGTERM during the first batch of {batchSize}",
  consumerSigterm: "consumer: SIGTERM while {inHandlers} messages are in the handler",
  restartDrain: "restart and drain everything",
  sigkill: "same with SIGKILL (comparison, {kills} kills)",
  rollingRestart: "rolling restart: {restarts} SIGTERM restarts, 2 replicas each",
  chaos: "chaos: {kills} SIGKILLs, {postgresRestarts} Postgres restart, {busOutages} bus outage",
  terminationRace:
    "termination race: 2 api replicas behind a round-robin proxy that drops one {propagationMs} ms after its stop begins",
  slowDependency: "slow dependency: equipment stub hangs {hang}",
  deadline: "deadline: client sends X-Request-Timeout-Ms: {headerMs}, equipment stub hangs",
  photoChain:
    "photo chain: {posts} posts under a rolling restart of api, relay and consumer ({restarts} restarts)",
  fault: "{fault}",
  replay: "replay: relay republish of the {published} events published (replay=true), consumer running",
  claimCheck: "claim check: a {payload} payload through S3, and one whose object was deleted",
  failover: "{outage}",
  racingProducers:
    "{producers} producers, {keys} keys, held transactions ({held}); two relays, {killed} mid-run",
} as const;

export type CheckRow = keyof typeof CHECK_ROWS;

type Placeholders<T extends string> = T extends `${string}{${infer Name}}${infer Rest}`
  ? Name | Placeholders<Rest>
  : never;

/** The row's check column with its placeholders filled in. */
export function checkName<R extends CheckRow>(
  row: R,
  figures: Readonly<Record<Placeholders<(typeof CHECK_ROWS)[R]>, string | number>>,
): string {
  const values: Readonly<Record<string, string | number>> = figures;
  return CHECK_ROWS[row].replace(/\{(\w+)\}/g, (_, name: string) => String(values[name]));
}

/** Whether `check` is the row's check column with any figures in its placeholders (none holds a `|`). */
export function isCheckOf(row: CheckRow, check: string): boolean {
  const pattern = CHECK_ROWS[row]
    .split(/\{\w+\}/)
    .map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^|]+");
  return new RegExp(`^${pattern}$`).test(check);
}
