import type { Message } from "@aws-sdk/client-sqs";
import { Deadline } from "@outbox/client";
import type { Capacity, Logger } from "@outbox/shared";
import type { ConsumerMetrics, MessageResult } from "../metrics.js";
import type { VisibilityHeartbeat } from "../queue/heartbeat.js";
import type { MessageSettler } from "../queue/settle.js";
import type { ResultCounts } from "./count-results.js";
import type { DrainDeadline } from "./drain.js";
import { GroupLanes } from "./group-queues.js";
import type { IntakeGate } from "./intake-gate.js";
import type { KillSwitch } from "./kill-switch.js";
import type { ReceivedBatch } from "./pollers.js";

export interface DispatchOptions {
  /** FIFO queues: each message group runs in its own lane (GroupLanes). */
  readonly fifo: boolean;
  readonly visibilityTimeoutSeconds: number;
  readonly handlerTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Handles one message to its end (processMessage). */
  readonly process: (message: Message, leaseExpiresAt: number) => Promise<MessageResult>;
  /**
   * Handles a receive's messages together (processReceived), one promise per message; given when
   * some handler takes batches. Not on FIFO queues: there each group's messages run one by one.
   */
  readonly processReceived?: (
    messages: readonly Message[],
    leaseExpiresAt: number,
  ) => readonly Promise<MessageResult>[];
  readonly settle: MessageSettler;
  readonly capacity: Capacity;
  readonly heartbeat: VisibilityHeartbeat;
  readonly drain: DrainDeadline;
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

function settled(tasks: ReadonlySet<Promise<void>>): Promise<void> {
  return Promise.all(tasks).then(() => undefined);
}

/**
 * Received batches → one task per message (a lane per group on FIFO queues), each holding its
 * capacity slot until it settles. The drain waits for these tasks.
 */
export class MessageDispatcher {
  readonly #options: DispatchOptions;
  readonly #tasks = new Set<Promise<void>>();
  readonly #lanes: GroupLanes;
  /** Messages received and not yet settled (reserved slots of open polls are not messages yet). */
  #handling = 0;

  constructor(options: DispatchOptions) {
    this.#options = options;
    const { heartbeat, drain, handlerTimeoutMs, requestTimeoutMs } = options;
    this.#lanes = new GroupLanes({
      run: async (message, leaseExpiresAt) =>
        this.#holdAfter(message, await this.#processAndCount(message, leaseExpiresAt)),
      release: async (messages, visibilitySeconds) => {
        await this.#releaseUntouched(messages, visibilitySeconds);
        this.#leave(messages.length);
      },
      heartbeat,
      // Each message ahead ends by its deadline, plus one SQS call to settle it.
      waitDeadline: (ahead) =>
        Deadline.after(ahead * (handlerTimeoutMs + requestTimeoutMs), drain.messagesEnd),
    });
  }

  get handling(): number {
    return this.#handling;
  }

  onBatch(batch: ReceivedBatch): void {
    // A long poll that was open at the stop: process what it brought if the drain can still give
    // each message more than the safety margin, else release it at once. One open when intake
    // paused: another consumer may take it now, this one would only hold it.
    if (this.#options.drain.tooLateToStart() || (!this.#options.gate.isOpen && !batch.trial)) {
      this.#track(
        this.#releaseUntouched(batch.messages, 0).then(() =>
          this.#options.capacity.release(batch.messages.length),
        ),
      );
      return;
    }
    const { processReceived, fifo } = this.#options;
    if (processReceived === undefined || fifo) {
      for (const message of batch.messages) this.#dispatch(message, batch.sentAt);
      return;
    }
    this.#handling += batch.messages.length;
    this.#options.metrics.inFlight.inc(batch.messages.length);
    const leaseExpiresAt = batch.sentAt + this.#options.visibilityTimeoutSeconds * 1_000;
    const outcomes = processReceived(batch.messages, leaseExpiresAt);
    outcomes.forEach((outcome, index) => {
      this.#track(this.#count(batch.messages[index], outcome));
    });
  }

  /** Resolves once every message dispatched, including any dispatched meanwhile, has settled. */
  async finished(): Promise<void> {
    while (this.#tasks.size > 0) await settled(this.#tasks);
  }

  /** Resolves once the messages in hand now have settled. */
  settled(): Promise<void> {
    return settled(this.#tasks);
  }

  #dispatch(message: Message, sentAt: number): void {
    this.#handling += 1;
    this.#options.metrics.inFlight.inc();
    const leaseExpiresAt = sentAt + this.#options.visibilityTimeoutSeconds * 1_000;
    const group = this.#options.fifo ? message.Attributes?.MessageGroupId : undefined;
    if (group === undefined) {
      this.#track(this.#processAndCount(message, leaseExpiresAt));
      return;
    }
    const lane = this.#lanes.add(group, message, leaseExpiresAt);
    if (lane !== undefined) this.#track(lane);
  }

  /** Handles and counts one message; resolves undefined (never rejects) when handling crashed. */
  #processAndCount(message: Message, leaseExpiresAt: number): Promise<MessageResult | undefined> {
    return this.#count(message, this.#options.process(message, leaseExpiresAt));
  }

  /** Counts how a message ended; resolves undefined (never rejects) when handling crashed. */
  async #count(
    message: Message | undefined,
    handling: Promise<MessageResult>,
  ): Promise<MessageResult | undefined> {
    try {
      const result = await handling;
      this.#options.counts.count(result);
      this.#options.killSwitch.record(result);
      return result;
    } catch (error) {
      // Every expected failure is handled by processMessage; this is a bug, and the lease returns the message.
      this.#options.log.error({ err: error, messageId: message?.MessageId }, "message handling crashed");
      this.#options.fail(error);
      return undefined;
    } finally {
      this.#leave(1);
    }
  }

  /**
   * FIFO: how long the rest of a message's group is held after it ended so. A retry holds it for
   * the retry delay, a release (or a crash) releases it at once; any other end lets it go on.
   */
  #holdAfter(message: Message, result: MessageResult | undefined): number | undefined {
    if (result === "failed") return this.#options.settle.retryDelayOf(message);
    if (result === "released" || result === undefined) return 0;
    return undefined;
  }

  /** Releases messages never started and counts them released. */
  async #releaseUntouched(messages: readonly Message[], visibilitySeconds: number): Promise<void> {
    await this.#options.settle.releaseUntouched(messages, visibilitySeconds);
    for (let index = 0; index < messages.length; index += 1) this.#options.counts.count("released");
  }

  /** Messages that leave our hands: no longer handled, their slots free. */
  #leave(count: number): void {
    this.#handling -= count;
    this.#options.metrics.inFlight.dec(count);
    this.#options.capacity.release(count);
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
