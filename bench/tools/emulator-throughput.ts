import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Agent, request } from "node:http";
import { createInterface } from "node:readline";
import { PublishBatchCommand } from "@aws-sdk/client-sns";
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import {
  type AwsEndpoints,
  bootstrapResources,
  SqsJsonClient,
  StatsClient,
  snsClient,
  sqsClient,
  startLocalAws,
} from "@outbox/devstack";

// PublishBatch → fan-out → SQS, through real HTTP: the emulator must not be what limits a relay
// benchmark. Two phases on separate topic/queue pairs:
//   publish-only: publishers only; Publish answers after SQS delivery, so this is SNS + SQS write.
//   end-to-end:   publishers and pollers (receive + delete) together, until all are received.
// Run: pnpm exec tsx --conditions=development bench/tools/emulator-throughput.ts
// Env: MESSAGES (20000), PUBLISHERS (8), POLLERS (8),
//      STACK_PROCESS=child|inproc (child: SNS + SQS in their own process, the default),
//      CLIENT=sdk|raw (the benchmark's own clients: AWS SDK, or unsigned raw HTTP that costs
//      the benchmark almost nothing), STACK_CPU_PROF=dir (profile the child stack process).
const TOTAL = Number(process.env.MESSAGES ?? 20_000);
const PUBLISHERS = Number(process.env.PUBLISHERS ?? 8);
const POLLERS = Number(process.env.POLLERS ?? 8);
const MODE = process.env.STACK_PROCESS === "inproc" ? "inproc" : "child";
const CLIENT = process.env.CLIENT === "raw" ? "raw" : "sdk";

interface Stack {
  aws: AwsEndpoints;
  statsUrl: string;
  stop(): Promise<void>;
}

async function inProcessStack(): Promise<Stack> {
  const { aws, sns, stop } = await startLocalAws();
  return { aws, statsUrl: sns.statsUrl, stop };
}

async function childProcessStack(): Promise<Stack> {
  const profile = process.env.STACK_CPU_PROF
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.STACK_CPU_PROF}`]
    : [];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...profile,
      "--conditions=development",
      "--import",
      "tsx",
      new URL("./stack-process.ts", import.meta.url).pathname,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> });
  const [line] = (await once(lines, "line")) as [string];
  const info = JSON.parse(line) as { aws: AwsEndpoints; statsUrl: string };
  return {
    aws: info.aws,
    statsUrl: info.statsUrl,
    stop: async () => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

interface Clients {
  publishBatch(
    topicArn: string,
    entries: Array<{ id: string; message: string; eventId: string }>,
  ): Promise<void>;
  receiveAndDelete(queueUrl: string): Promise<number>;
  destroy(): void;
}

function sdkClients(aws: AwsEndpoints): Clients {
  const sns = snsClient(aws);
  const sqs = sqsClient(aws);
  return {
    async publishBatch(topicArn, entries) {
      const result = await sns.send(
        new PublishBatchCommand({
          TopicArn: topicArn,
          PublishBatchRequestEntries: entries.map((e) => ({
            Id: e.id,
            Message: e.message,
            MessageAttributes: { event_id: { DataType: "String", StringValue: e.eventId } },
          })),
        }),
      );
      if (result.Failed?.length) throw new Error(`${result.Failed.length} entries failed`);
    },
    async receiveAndDelete(queueUrl) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      if (Messages.length === 0) return 0;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
      return Messages.length;
    },
    destroy() {
      sns.destroy();
      sqs.destroy();
    },
  };
}

/** Unsigned raw HTTP: the Query protocol for SNS, the JSON protocol for SQS. */
function rawClients(aws: AwsEndpoints): Clients {
  const sqs = new SqsJsonClient(aws.sqsEndpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const sns = new URL(aws.snsEndpoint);
  const post = (body: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: sns.hostname,
          port: sns.port,
          method: "POST",
          path: "/",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(text))));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return {
    async publishBatch(topicArn, entries) {
      const params = new URLSearchParams({
        Action: "PublishBatch",
        Version: "2010-03-31",
        TopicArn: topicArn,
      });
      entries.forEach((e, i) => {
        const p = `PublishBatchRequestEntries.member.${i + 1}`;
        params.set(`${p}.Id`, e.id);
        params.set(`${p}.Message`, e.message);
        params.set(`${p}.MessageAttributes.entry.1.Name`, "event_id");
        params.set(`${p}.MessageAttributes.entry.1.Value.DataType`, "String");
        params.set(`${p}.MessageAttributes.entry.1.Value.StringValue`, e.eventId);
      });
      const xml = await post(params.toString());
      if (xml.includes("<Failed><member>")) throw new Error("entries failed");
    },
    async receiveAndDelete(queueUrl) {
      const { Messages = [] } = await sqs.call<{ Messages?: Array<{ ReceiptHandle: string }> }>(
        "ReceiveMessage",
        {
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        },
      );
      if (Messages.length === 0) return 0;
      await sqs.call("DeleteMessageBatch", {
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      });
      return Messages.length;
    },
    destroy() {
      sqs.destroy();
      agent.destroy();
    },
  };
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

async function run(clients: Clients, topicArn: string, queueUrl: string, poll: boolean) {
  const batches = Math.ceil(TOTAL / 10);
  let nextBatch = 0;
  let received = 0;
  const started = performance.now();
  const publisher = async () => {
    for (let b = nextBatch++; b < batches; b = nextBatch++) {
      const entries = Array.from({ length: Math.min(10, TOTAL - b * 10) }, (_, i) => ({
        id: String(i),
        message: JSON.stringify({ batch: b, index: i, payload: "x".repeat(200) }),
        eventId: `${b}-${i}`,
      }));
      await clients.publishBatch(topicArn, entries);
    }
  };
  const poller = async () => {
    while (received < TOTAL) {
      // Not `received += await …`: that reads `received` before the await and loses updates.
      const count = await clients.receiveAndDelete(queueUrl);
      received += count;
    }
  };
  const pollers = poll ? Array.from({ length: POLLERS }, poller) : [];
  await Promise.all(Array.from({ length: PUBLISHERS }, publisher));
  const published = performance.now() - started;
  await Promise.all(pollers);
  return { published, done: performance.now() - started, received };
}

const stack = MODE === "child" ? await childProcessStack() : await inProcessStack();
const clients = CLIENT === "raw" ? rawClients(stack.aws) : sdkClients(stack.aws);
const stats = new StatsClient(stack.statsUrl);
try {
  console.log(
    `${TOTAL} messages, ${PUBLISHERS} publishers, ${POLLERS} pollers, stack ${MODE}, client ${CLIENT}`,
  );
  const a = await bootstrapResources(stack.aws, { name: "bench-publish", rawDelivery: true });
  const publishOnly = await run(clients, a.topicArn, a.queueUrl, false);
  const delivered = (await stats.topic(a.topicArn)).delivered;
  console.log(
    `publish-only: ${TOTAL} in ${Math.round(publishOnly.published)} ms (${rate(TOTAL, publishOnly.published)} msg/s, ${delivered} delivered to SQS)`,
  );
  const b = await bootstrapResources(stack.aws, { name: "bench-e2e", rawDelivery: true });
  const e2e = await run(clients, b.topicArn, b.queueUrl, true);
  console.log(
    `end-to-end:   published in ${Math.round(e2e.published)} ms (${rate(TOTAL, e2e.published)} msg/s), ` +
      `received ${e2e.received} in ${Math.round(e2e.done)} ms (${rate(e2e.received, e2e.done)} msg/s)`,
  );
} finally {
  clients.destroy();
  await stack.stop();
}
