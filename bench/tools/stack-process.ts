import { startLocalAws } from "@outbox/devstack";

// SQS + the SNS emulator in their own process (no Postgres), so a benchmark's clients do not
// compete with them for one event loop. Prints one JSON line with the endpoints, then serves
// until SIGTERM/SIGINT or until stdin closes (the parent died).
const local = await startLocalAws();
let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await local.stop();
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
process.stdin.on("end", shutdown);
process.stdin.resume();
console.log(JSON.stringify({ aws: local.aws, statsUrl: local.sns.statsUrl }));
