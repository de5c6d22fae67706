import { performance } from "node:perf_hooks";
import {
  type Message,
  type QueueAttributeName,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  type ReceiveMessageCommandOutput,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import type { Capacity } from "@outbox/shared";
import { type BackoffPolicy, backoffMs, type Logger, type LoopWatch, sleep } from "@outbox/shared";
import type { ConsumerMetrics } from "../metrics.js";
import type { IntakeGate } from "./intake-gate.js";

export interface ReceivedBatch {
  readonly messages: readonly Message[];
  /**
   * `performance.now()` when the receive was sent. SQS starts a message's lease somewhere between the
   * request and the response, so leases are measured from here: the earliest it can have started.
   */
  readonly sentAt: number;
  /** The kill switch's trial: one message received while it holds intake, handled to judge it by. */
  readonly trial: boolean;
}

export interface PollerOptions {
  readonly sqs: SQSClient;
  /** A client whose own request timeout covers a long poll (ConsumerOptions.receiveSqs). */
  readonly receiveSqs: SQSClient | undefined;
  readonly queueUrl: string;
  /** A FIFO queue: receives also ask for each message's MessageGroupId. */
  readonly fifo: boolean;
  readonly waitTimeSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  /** Socket inactivity limit of other calls; a long poll is silent for the wait time on top of it. */
  readonly requestTimeoutMs: number;
  readonly capacity: Capacity;
  /** Free slots a poller waits for before it sends a receive (see Capacity.reserve). */
  readonly minBatch: number;
  /** Aborts when intake stops: no receive is sent after it. */
  readonly stopping: AbortSignal;
  /** Closed while intake is paused (database unreachable, kill switch): no receive is sent meanwhile. */
  readonly gate: IntakeGate;
  /** Times each receive, for `/livez`: only the receive, not the waits for the gate or for slots. */
  readonly watch: LoopWatch;
  /** Takes the batch; every message in it holds one reserved slot until it settles. */
  readonly onBatch: (batch: ReceivedBatch) => void;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

type SystemAttribute = NonNullable<ReceiveMessageCommandInput["MessageSystemAttributeNames"]>[number];

/** The system attributes a receive asks for, both ways (see the receive below). */
export function systemAttributes(names: SystemAttribute[]): {
  MessageSystemAttributeNames: SystemAttribute[];
  AttributeNames: QueueAttributeName[];
} {
  // The SDK types the legacy AttributeNames as queue attributes; SQS reads message system attribute
  // names there (that is what it was for before MessageSystemAttributeNames).
  return { MessageSystemAttributeNames: names, AttributeNames: names as unknown as QueueAttributeName[] };
}

const STANDARD_ATTRIBUTES = systemAttributes(["ApproximateReceiveCount"]);
const FIFO_ATTRIBUTES = systemAttributes(["ApproximateReceiveCount", "MessageGroupId"]);
const ALL = ["All"];

const ERROR_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 20_000 };

/**
 * Sends one receive. A long poll is silent for up to its wait time, so its socket needs the wait on
 * top of the usual inactivity timeout: either the dedicated client has it, or this call carries it
 * (per-call options make a client with cacheMiddleware compose its middleware again).
 */
function sendReceive(
  options: PollerOptions,
  command: ReceiveMessageCommand,
): Promise<ReceiveMessageCommandOutput> {
  if (options.receiveSqs) return options.receiveSqs.send(command);
  return options.sqs.send(command, {
    requestTimeout: options.waitTimeSeconds * 1_000 + options.requestTimeoutMs,
  });
}

async function poll(options: PollerOptions): Promise<void> {
  const { capacity, stopping, log, metrics } = options;
  const attributes = options.fifo ? FIFO_ATTRIBUTES : STANDARD_ATTRIBUTES;
  let consecutiveErrors = 0;
  const { gate } = options;
  while (!stopping.aborted) {
    const admission = await gate.admit(stopping);
    if (admission === "stopped") break;
    const trial = admission === "trial";
    const most = trial ? 1 : MAX_BATCH_ENTRIES;
    const reserved = await capacity.reserve(Math.min(options.minBatch, most), most, stopping);
    if (reserved === 0) {
      if (trial) gate.returnTrial();
      break;
    }
    // Paused while this poller waited for slots.
    if (!trial && !gate.isOpen) {
      capacity.giveBack(reserved);
      continue;
    }
    const sentAt = performance.now();
    try {
      // No abortSignal on purpose: SQS may already have handed messages to this request, and aborting
      // it at the stop would strand them, invisible, until their visibility timeout passes.
      const output = await options.watch.step(() =>
        sendReceive(
          options,
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: reserved,
            WaitTimeSeconds: options.waitTimeSeconds,
            // Explicit, so the lease we track is the lease we have, whatever the queue's default.
            VisibilityTimeout: options.visibilityTimeoutSeconds,
            // Real SQS reads MessageSystemAttributeNames; local-aws-sqs only the legacy AttributeNames.
            // Only the system attributes we use (the group on FIFO queues only): every other one is
            // parsed per message for nothing.
            ...attributes,
            // Every string attribute reaches the handler as a header.
            MessageAttributeNames: ALL,
          }),
        ),
      );
      const messages = output.Messages ?? [];
      capacity.giveBack(reserved - messages.length);
      consecutiveErrors = 0;
      if (messages.length > 0) {
        metrics.received.inc(messages.length);
        options.onBatch({ messages, sentAt, trial });
      } else if (trial) gate.returnTrial();
    } catch (error) {
      if (trial) gate.returnTrial();
      capacity.giveBack(reserved);
      metrics.receiveErrors.inc();
      consecutiveErrors += 1;
      const retryInMs = backoffMs(consecutiveErrors, ERROR_BACKOFF);
      log.warn({ err: error, retryInMs }, "receive failed");
      await sleep(retryInMs, stopping);
    }
  }
}

/** Starts `count` long-poll loops; resolves once every one has returned its last receive after the stop. */
export function startPollers(count: number, options: PollerOptions): Promise<void> {
  return Promise.all(Array.from({ length: count }, () => poll(options))).then(() => undefined);
}
