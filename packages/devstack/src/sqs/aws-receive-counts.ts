import type { createRequestHandler } from "local-aws-sqs";

type SqsService = ReturnType<typeof createRequestHandler>["service"];
type Queue = SqsService["Queues"][number];

/** The record `Queue.newRecord` returns: the queue's own entry, not a copy. */
interface LiveEntry {
  readonly record?: { readonly attributes?: Record<string, string> };
}

const RECEIVE_COUNT = "ApproximateReceiveCount";

/**
 * Makes `local-aws-sqs` count receives as AWS does. It counts a ChangeMessageVisibility as one more
 * receive (a probe of receive → change visibility → receive reads 1 then 3; AWS and moto read 1 then
 * 2), and decides the redrive to the DLQ on that count: every test of retries, releases and the DLQ
 * would reach the DLQ after about half the real attempts.
 *
 * The emulator raises the count inside `changeVisibility`, synchronously, on the queue's own record
 * (which `newRecord` returns). So each queue's `newRecord` hands out records whose count ignores
 * writes made while its `changeVisibility` runs; receives, which raise it anywhere else, count as
 * before, and the redrive reads the corrected count. Called before every request: a queue is
 * created by one request and gets messages only in later ones. test/devstack/receive-count.test.ts
 * pins the behaviour against moto's.
 */
export function countReceivesAsAws(service: SqsService): void {
  for (const queue of service.Queues) {
    if (!corrected.has(queue)) correct(queue);
  }
}

const corrected = new WeakSet<Queue>();

function correct(queue: Queue): void {
  corrected.add(queue);
  let changingVisibility = false;
  const changeVisibility = queue.changeVisibility.bind(queue);
  queue.changeVisibility = (receiptHandle, visibilityTimeout) => {
    changingVisibility = true;
    try {
      return changeVisibility(receiptHandle, visibilityTimeout);
    } finally {
      changingVisibility = false;
    }
  };
  const newRecord = queue.newRecord;
  queue.newRecord = (message, delay) => {
    const entry: LiveEntry = newRecord(message, delay);
    const attributes = entry.record?.attributes;
    if (attributes === undefined) throw new Error(`local-aws-sqs changed: a record without ${RECEIVE_COUNT}`);
    let count = attributes[RECEIVE_COUNT] ?? "0";
    // Enumerable, so the copies a receive returns carry the value.
    Object.defineProperty(attributes, RECEIVE_COUNT, {
      enumerable: true,
      get: () => count,
      set: (value: string) => {
        if (!changingVisibility) count = value;
      },
    });
    return entry;
  };
}
