import { startEmbeddedSqs, startSnsEmulator } from "@outbox/devstack";

// SQS + the SNS emulator in their own process (no Postgres), so a benchmark's clients do not
// compete with them for one event loop. Prints one JSON line with the endpoints, then serves
// until SIGTERM/SIGINT or until stdin closes (the parent died).
const region = "us-east-1";
const accountId = "000000000000";
const sqs = await startEmbeddedSqs({ region, accountId });
const sns = await startSnsEmulator({
  sqsEndpoint: sqs.endpoint,
  region,
  accountId,
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
});
let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await sns.stop();
  await sqs.stop();
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
process.stdin.on("end", shutdown);
process.stdin.resume();
console.log(
  JSON.stringify({ snsEndpoint: sns.endpoint, sqsEndpoint: sqs.endpoint, statsUrl: sns.statsUrl, region }),
);
