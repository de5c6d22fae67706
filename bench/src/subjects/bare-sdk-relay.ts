import { randomUUID } from "node:crypto";
import { PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import { MAX_BATCH_ENTRIES, messageAttributes } from "@outbox/client/internal";
import { benchEvent } from "../fixtures.js";
import type { RelayJob } from "../jobs.js";
import type { Counter, Subject } from "./measure-subject.js";
import { OUR_PUBLISH_CONCURRENCY } from "./our-relay.js";

/**
 * No relay at all: OUR_PUBLISH_CONCURRENCY loops of PublishBatch, 10 of the bench's events each with
 * the attributes our relay sends (event_id, event_type, the traceparent header), on the same client,
 * with no Postgres. What the SNS emulator and the SDK allow by themselves — the most a relay with as
 * many calls in flight can reach on this machine — and the floor of a relay's CPU per event.
 */
export function bareSdkRelay(job: RelayJob, sns: SNSClient, counter: Counter): Subject {
  const total = job.expected ?? Number.POSITIVE_INFINITY;
  let taken = 0;
  let running = true;
  async function loop(): Promise<void> {
    while (running && taken < total) {
      const count = Math.min(MAX_BATCH_ENTRIES, total - taken);
      const first = taken;
      taken += count;
      const entries = Array.from({ length: count }, (_, index) => {
        const event = benchEvent(first + index);
        const id = randomUUID();
        const attributes = messageAttributes(id, event.eventType, event.headers ?? {});
        return {
          Id: id,
          Message: JSON.stringify(event.payload),
          MessageAttributes: Object.fromEntries(
            Object.entries(attributes).map(([name, value]) => [
              name,
              { DataType: "String", StringValue: value },
            ]),
          ),
        };
      });
      const { Successful: published = [] } = await sns.send(
        new PublishBatchCommand({ TopicArn: job.topicArn, PublishBatchRequestEntries: entries }),
      );
      counter.add(published.length);
    }
  }
  let loops: Promise<unknown> = Promise.resolve();
  return {
    start() {
      loops = Promise.all(Array.from({ length: OUR_PUBLISH_CONCURRENCY }, loop));
    },
    async stop() {
      running = false;
      await loops;
    },
  };
}
