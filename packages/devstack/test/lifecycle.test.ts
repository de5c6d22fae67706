import { readdir } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { PublishCommand } from "@aws-sdk/client-sns";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { bootstrapResources, snsClient, sqsClient, startStack } from "@outbox/devstack";
import { expect, it } from "vitest";

function portAnswers(port: number): Promise<boolean | string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? false));
  });
}

const tempDirs = async () => new Set((await readdir(tmpdir())).filter((d) => d.startsWith("outbox-pg-")));

it("starts, serves, and stops without leaving ports or temp dirs behind", async () => {
  const before = await tempDirs();
  const stack = await startStack({ backend: "embedded" });
  const created = [...(await tempDirs())].filter((d) => !before.has(d));
  expect(created).toHaveLength(1);

  const ports = [stack.postgres.adminUrl, stack.aws.snsEndpoint, stack.aws.sqsEndpoint].map((u) =>
    Number(new URL(u).port),
  );
  try {
    for (const port of ports) expect(await portAnswers(port)).toBe(true);
    const sns = snsClient(stack.aws);
    const sqs = sqsClient(stack.aws);
    const r = await bootstrapResources(stack.aws, { name: "lifecycle", rawDelivery: true });
    await sns.send(new PublishCommand({ TopicArn: r.topicArn, Message: "alive" }));
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: r.queueUrl, WaitTimeSeconds: 1 }),
    );
    expect(Messages?.[0]?.Body).toBe("alive");
    sns.destroy();
    sqs.destroy();
  } finally {
    await stack.stop();
  }

  for (const port of ports) expect(await portAnswers(port)).toBe("ECONNREFUSED");
  const after = await tempDirs();
  for (const dir of created) expect(after.has(dir)).toBe(false);
});
