import { EXIT_CRASH, EXIT_OK } from "@outbox/shared";
import { awsEnvironment } from "./aws-environment.js";
import { bootstrapResources } from "./bootstrap.js";
import { startStack } from "./stack.js";

// `pnpm stack`: the embedded stack in the foreground, with a `demo` topic/queue, until Ctrl-C.
const stack = await startStack({ backend: "embedded" });

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.error("stopping local stack…");
  try {
    await stack.stop();
    process.exit(EXIT_OK);
  } catch (error) {
    console.error(error);
    process.exit(EXIT_CRASH);
  }
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
process.on("SIGHUP", shutdown);

try {
  // Raw delivery, as the CDK stack subscribes and the consumer reads by default (CONSUMER_DELIVERY).
  const demo = await bootstrapResources(stack.aws, { name: "demo", rawDelivery: true });
  const env: Record<string, string> = {
    DATABASE_URL: stack.postgres.adminUrl,
    ...awsEnvironment(stack.aws),
    // The names the daemons read: `eval` the output and the relay and the consumer run on the demo.
    RELAY_DEFAULT_TOPIC_ARN: demo.topicArn,
    CONSUMER_QUEUE_URL: demo.queueUrl,
    CONSUMER_DLQ_URL: demo.dlqUrl,
  };
  for (const [name, value] of Object.entries(env)) console.log(`export ${name}=${value}`);
  if (stack.faultControlUrl) console.error(`# fault control: ${stack.faultControlUrl}`);
  console.error("# local stack running; Ctrl-C to stop");
} catch (error) {
  console.error(error);
  await shutdown();
}
