/**
 * The memory of a DLQ listing: 10 000 dead letters of 256 KiB (2.5 GiB of bodies) listed by
 * `consumer dlq list --json` and by the operator console's Dead letters view, each a process of its
 * own whose peak RSS (VmHWM) is read from /proc while it runs. The suite proves the listing keeps no
 * body (dead-letter-memory test, a few hundred messages); this tool measures the figure at full size.
 * The SQS emulator holds the bodies in this process: give it room.
 *
 *   NODE_OPTIONS=--max-old-space-size=8192 pnpm exec tsx --conditions=development bench/tools/dlq-memory.ts
 *
 * BENCH_LETTERS (default 10 000), BENCH_BODY_KIB (default 255: a body and its attributes within SQS's 256 KiB).
 */

import { readFile } from "node:fs/promises";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import {
  awsEnvironment,
  bootstrapResources,
  sqsClient,
  startEmbeddedPostgres,
  startLocalAws,
} from "@outbox/devstack";
import { type DaemonProcess, startDaemonProcess } from "@outbox/test-kit/process";
import { freshDatabase } from "../src/fixtures.js";

const LETTERS = Number(process.env.BENCH_LETTERS ?? 10_000);
const BODY_CHARS = Number(process.env.BENCH_BODY_KIB ?? 255) * 1_024;
const MIB = 1_024 * 1_024;

/** A process's peak and current resident set, bytes (/proc/PID/status: VmHWM, VmRSS). */
async function residentOf(pid: number): Promise<{ peak: number; now: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kib = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1_024;
    return { peak: kib("VmHWM"), now: kib("VmRSS") };
  } catch {
    return undefined; // exited
  }
}

/** The highest peak RSS `daemon` reaches until it exits or `until` resolves, polled every 100 ms. */
async function peakWhile(daemon: DaemonProcess, until: Promise<unknown>): Promise<number> {
  let peak = 0;
  let done = false;
  void until.finally(() => {
    done = true;
  });
  void daemon.exited.finally(() => {
    done = true;
  });
  while (!done) {
    peak = Math.max(peak, (await residentOf(daemon.child.pid ?? 0))?.peak ?? 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Math.max(peak, (await residentOf(daemon.child.pid ?? 0))?.peak ?? 0);
}

const local = await startLocalAws();
const postgres = await startEmbeddedPostgres();
const sqs = sqsClient(local.aws);
const started: DaemonProcess[] = [];
try {
  const { url, handle } = await freshDatabase(postgres.adminUrl, "bench_dlq");
  await handle.close(5_000);
  const queues = await bootstrapResources(local.aws, {
    name: `bench-dlq-${Date.now()}`,
    fifo: false,
    rawDelivery: true,
  });
  process.stderr.write(`sending ${LETTERS} dead letters of ${BODY_CHARS / 1_024} KiB…\n`);
  const body = "x".repeat(BODY_CHARS - 16);
  for (let at = 0; at < LETTERS; at += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, LETTERS - at) }, (_, index) =>
        sqs.send(
          new SendMessageCommand({
            QueueUrl: queues.dlqUrl,
            MessageBody: `${String(at + index).padStart(15)} ${body}`,
            MessageAttributes: {
              [EVENT_ID_ATTRIBUTE]: { DataType: "String", StringValue: `event-${at + index}` },
              [EVENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: "photo.posted" },
              poison_reason: { DataType: "String", StringValue: "body_not_json: Unexpected token x" },
            },
          }),
        ),
      ),
    );
    if ((at + 16) % 2_000 === 0) process.stderr.write(`  ${at + 16}\n`);
  }
  const env = {
    ...awsEnvironment(local.aws),
    NODE_NO_WARNINGS: "1",
    DATABASE_URL: url,
    CONSUMER_QUEUE_URL: queues.queueUrl,
    CONSUMER_DLQ_URL: queues.dlqUrl,
    LOG_LEVEL: "info",
  };
  const rows: string[] = [];

  process.stderr.write("consumer dlq list --json…\n");
  const list = startDaemonProcess("apps/consumer/src/main.ts", env, {
    name: "dlq list",
    args: ["dlq", "list", "--json"],
  });
  started.push(list);
  const listPeak = await peakWhile(list, list.exited);
  const listExit = await list.exited;
  const listed = list.lines.find((line) => "total" in line);
  rows.push(
    `| consumer dlq list --json | ${String(listed?.total ?? "?")} listed, exit ${listExit.code} | ${(listPeak / MIB).toFixed(0)} MiB |`,
  );

  process.stderr.write("the console's Dead letters view…\n");
  const console_ = startDaemonProcess(
    "apps/console/src/main.ts",
    { ...env, CONSOLE_PORT: "0" },
    { name: "console" },
  );
  started.push(console_);
  const listening = await console_.waitForLog("console listening", {}, 120_000);
  const idle = (await residentOf(console_.child.pid ?? 0))?.now ?? 0;
  const view = (async () => {
    const answer = await fetch(new URL("/dead-letters", String(listening.url)));
    const page = await answer.text();
    const second = await fetch(new URL("/dead-letters?page=2", String(listening.url)));
    await second.text();
    return { status: answer.status, listed: /data-count="dead-letters">(\d+)</.exec(page)?.[1] ?? "?" };
  })();
  const consolePeak = await peakWhile(console_, view);
  const shown = await view;
  rows.push(
    `| console /dead-letters (and ?page=2) | ${shown.listed} listed, HTTP ${shown.status} | ${(consolePeak / MIB).toFixed(0)} MiB (${(idle / MIB).toFixed(0)} MiB before the walk) |`,
  );
  process.stdout.write(
    `\n${LETTERS} dead letters of ${BODY_CHARS / 1_024} KiB (${((LETTERS * BODY_CHARS) / MIB / 1_024).toFixed(2)} GiB of bodies)\n\n| process | listing | peak RSS |\n| --- | --- | ---: |\n${rows.join("\n")}\n`,
  );
} finally {
  for (const daemon of started) if (daemon.child.exitCode === null) await daemon.stop("SIGTERM");
  sqs.destroy();
  await local.stop();
  await postgres.stop();
}
