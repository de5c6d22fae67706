import type { Message } from "@aws-sdk/client-sqs";
import { Deadline } from "@outbox/client";
import type { Capacity, DrainDeadline, Logger } from "@outbox/shared";
import type { MessageFate } from "../message/fate.js";
import type { MessagePipeline } from "../message/pipeline.js";
import type { ConsumerMetrics } from "../metrics.js";
import type { VisibilityHeartbeat } from "../queue/heartbeat.js";
import type { MessageQueue } from "../queue/message-queue.js";
import type { ResultCounts } from "./count-results.js";
import { tooLateToStart } from "./drain.js";
import { FifoGroups } from "./fifo-groups.js";
import type { IntakeGate } from "./intake-gate.js";
import type { KillSwitch } from "./kill-switch.js";
import type { ReceivedBatch } from "./pollers.js";

export interface DispatchOptions {
  /** FIFO queues: each message group's messages run one after another (FifoGroups). */
  readonly fifo: boolean;
  readonly visibilityTimeoutSeconds: number;
  readonly handlerTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /**
   * Each message to its fate; a receive's messages together when some handler takes batches (not on
   * FIFO queues: there each group's messages run one by one).
   */
  readonly pipeline: MessagePipeline;
  /** Carries out each fate. */
  readonly queue: MessageQueue;
  readonly capacity: Capacity;
  readonly heartbeat: VisibilityHeartbeat;
  readonly drain: DrainDeadline;
  /** During a drain, a batch is released untouched when less than this is left. */
  readonly drainMarginMs: number;
  readonly counts: ResultCounts;
  /** Closed while intake is paused: a batch a long poll brings then is handed back untouched. */
  readonly gate: IntakeGate;
  /** Told how each message ended. */
  readonly killSwitch: Pick<KillSwitch, "record">;
  readonly metrics: ConsumerMetrics;
  readonly log: Logger;
  /** Told about a bug (handling that crashed), never about a failing message. */
  readonly fail: (error: unknown) => void;
}

function allEnded(tasks: ReadonlySet<Promise<void>>): Promise<void> {
  return Promise.all(tasks).then(() => undefined);
}

/**
 * Received batches → one task per message (FIFO: one line per group), each holding its capacity
 * slot until the message's fate is carried out. The drain waits for these tasks.
 */
export class MessageDispatcher {
  readonly #options: DispatchOptions;
  readonly #tasks = new Set<Promise<void>>();
  readonly #groups: FifoGroups;
  /** Messages received and not yet settled (reserved slots of open polls are not messages yet). */
  #handling = 0;

  constructor(options: DispatchOptions) {
    this.#options = options;
    const { heartbeat, drain, handlerTimeoutMs, requestTimeoutMs } = options;
    this.#groups = new FifoGroups({
      run: async (message, leaseExpiresAt) => holdAfter(await this.#run(message, leaseExpiresAt)),
      releaseUntouched: async (messages, visibilitySeconds) => {
        await this.#releaseUntouched(messages, visibilitySeconds);
        this.#leave(messages.length);
      },
      heartbeat,
      // Each message ahead ends by its deadline, plus one SQS call to settle it.
      waitDeadline: (ahead) => Deadline.after(ahead * (handlerTimeoutMs + requestTimeoutMs), drain.deadline),
    });
  }

  get handling(): number {
    return this.#handling;
  }

  onBatch(batch: ReceivedBatch): void {
    const { drain, drainMarginMs, gate, pipeline, fifo } = this.#options;
    // A long poll that was open at the stop: process what it brought if the drain can still give
    // each message more than the safety margin, else release it at once. One open when intake
    // paused: another consumer may take it now, this one would only hold it.
    if (tooLateToStart(drain, drainMarginMs) || (!gate.isOpen && !batch.trial)) {
      this.#track(
        this.#releaseUntouched(batch.messages, 0).then(() =>
          this.#options.capacity.giveBack(batch.messages.length),
        ),
      );
      return;
    }
    if (!pipeline.batches || fifo) {
      for (const message of batch.messages) this.#dispatch(message, batch.sentAt);
      return;
    }
    this.#handling += batch.messages.length;
    this.#options.metrics.inFlight.inc(batch.messages.length);
    const leaseExpiresAt = batch.sentAt + this.#options.visibilityTimeoutSeconds * 1_000;
    const fates = pipeline.handleReceive(batch.messages, leaseExpiresAt);
    batch.messages.forEach((message, index) => {
      const fate = fates[index];
      if (fate !== undefined) this.#track(this.#settle(message, fate));
    });
  }

  /** Resolves once every message dispatched, including any dispatched meanwhile, has been settled. */
  async finished(): Promise<void> {
    while (this.#tasks.size > 0) await allEnded(this.#tasks);
  }

  /** Resolves once the messages in hand now have been settled. */
  inHand(): Promise<void> {
    return allEnded(this.#tasks);
  }

  #dispatch(message: Message, sentAt: number): void {
    this.#handling += 1;
    this.#options.metrics.inFlight.inc();
    const leaseExpiresAt = sentAt + this.#options.visibilityTimeoutSeconds * 1_000;
    const group = this.#options.fifo ? message.Attributes?.MessageGroupId : undefined;
    if (group === undefined) {
      this.#track(this.#run(message, leaseExpiresAt));
      return;
    }
    const line = this.#groups.add(group, message, leaseExpiresAt);
    if (line !== undefined) this.#track(line);
  }

  /** One message to its fate, carried out and counted; resolves undefined (never rejects) when handling crashed. */
  #run(message: Message, leaseExpiresAt: number): Promise<MessageFate | undefined> {
    return this.#settle(message, this.#options.pipeline.handle(message, leaseExpiresAt));
  }

  /** Carries out and counts a message's fate; resolves undefined (never rejects) when handling crashed. */
  async #settle(message: Message, deciding: Promise<MessageFate>): Promise<MessageFate | undefined> {
    try {
      const fate = await this.#options.queue.settle(message, await deciding);
      this.#options.counts.count(fate.result);
      this.#options.killSwitch.record(fate.result);
      return fate;
    } catch (error) {
      // Every expected failure has a fate; this is a bug, and the lease returns the message.
      this.#options.log.error({ err: error, messageId: message.MessageId }, "message handling crashed");
      this.#options.fail(error);
      return undefined;
    } finally {
      this.#leave(1);
    }
  }

  /** Releases messages never started and counts them released. */
  async #releaseUntouched(messages: readonly Message[], visibilitySeconds: number): Promise<void> {
    await this.#options.queue.releaseUntouched(messages, visibilitySeconds);
    for (let index = 0; index < messages.length; index += 1) this.#options.counts.count("released");
  }

  /** Messages that leave our hands: no longer handled, their slots free. */
  #leave(count: number): void {
    this.#handling -= count;
    this.#options.metrics.inFlight.dec(count);
    this.#options.capacity.giveBack(count);
  }

  #track(task: Promise<unknown>): void {
    const tracked: Promise<void> = task.then(
      () => {
        this.#tasks.delete(tracked);
      },
      (error: unknown) => {
        this.#tasks.delete(tracked);
        this.#options.fail(error);
      },
    );
    this.#tasks.add(tracked);
  }
}

/**
 * FIFO: how long the rest of a message's group is held after it ended so. A retry holds it for
 * the retry delay, a release (or a crash) releases it at once; any other end lets it go on.
 */
function holdAfter(fate: MessageFate | undefined): number | undefined {
  if (fate === undefined || fate.result === "released") return 0;
  if (fate.result === "failed") return fate.retryInSeconds;
  return undefined;
}
