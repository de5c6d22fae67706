import { PublishCommand } from "@aws-sdk/client-sns";
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { type AwsEndpoints, bootstrapResources, snsClient, sqsClient } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import { stack, uniqueName } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";

// A long poll answers as soon as a message is there, however many it asked for: AWS and moto do,
// and so must the run's SQS (local-aws-sqs waited for MaxNumberOfMessages or the end of the wait,
// so every local commit → effect took the consumer's whole wait time). moto serves every service on
// the stack's S3 port; the containers backend has none.
const { aws } = stack();
const motoEndpoint = aws.s3Endpoint;

const WAIT_SECONDS = 10;
const SEND_AFTER_MS = 1_000;
/** Generous: the bug answered 9 s after the send; a prompt answer takes milliseconds. */
const PROMPT_MS = (WAIT_SECONDS * 1_000) / 2;

type Route = "direct" | "sns raw" | "sns envelope";

/** Long poll (10 s, up to 10 messages), one message 1 s into it: how long after the send did it answer? */
async function probe(endpoints: AwsEndpoints, route: Route) {
  const resources = await bootstrapResources(endpoints, {
    name: uniqueName("long-poll"),
    rawDelivery: route === "sns raw",
  });
  const sqs = sqsClient(endpoints);
  const sns = snsClient(endpoints);
  try {
    const receive = sqs
      .send(
        new ReceiveMessageCommand({
          QueueUrl: resources.queueUrl,
          WaitTimeSeconds: WAIT_SECONDS,
          MaxNumberOfMessages: 10,
        }),
      )
      .then((answer) => ({ answer, at: performance.now() }));
    // Set-up, not a verdict: the poll must be waiting when the message comes.
    await sleep(SEND_AFTER_MS);
    const sentAt = performance.now();
    if (route === "direct") {
      await sqs.send(new SendMessageCommand({ QueueUrl: resources.queueUrl, MessageBody: "probe" }));
    } else {
      await sns.send(new PublishCommand({ TopicArn: resources.topicArn, Message: "probe" }));
    }
    const { answer, at } = await receive;
    return { messages: answer.Messages?.length ?? 0, afterSendMs: at - sentAt };
  } finally {
    sqs.destroy();
    sns.destroy();
  }
}

const routes: Route[] = ["direct", "sns raw", "sns envelope"];

describe.runIf(stack().backend === "embedded" && motoEndpoint !== undefined)("long poll", () => {
  const moto: AwsEndpoints = {
    ...aws,
    sqsEndpoint: motoEndpoint as string,
    snsEndpoint: motoEndpoint as string,
  };

  it.each(routes)("answers once one message is there (%s), as moto does", async (route) => {
    const [onMoto, onStack] = await Promise.all([probe(moto, route), probe(aws, route)]);
    expect(onMoto.messages).toBe(1);
    expect(onMoto.afterSendMs).toBeLessThan(PROMPT_MS);
    expect(onStack.messages).toBe(1);
    expect(onStack.afterSendMs).toBeLessThan(PROMPT_MS);
  });
});
