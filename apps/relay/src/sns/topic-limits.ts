import { Deadline } from "@outbox/client";
import {
  describeError,
  isTopicMessageLimit,
  MAX_MESSAGE_BYTES,
  MAX_TOPIC_MESSAGE_BYTES,
  MIN_TOPIC_MESSAGE_BYTES,
} from "@outbox/client/internal";
import { type Logger, untilAborted } from "@outbox/shared";

/** Reads one topic's message-size limit (its `MaximumMessageSize`), bounded by `deadline`. */
export type TopicLimitReader = (topicArn: string, deadline: Deadline) => Promise<number>;

export interface TopicLimitsSettings {
  /** The longest one read may take, SDK retries included: the relay's publish timeout. */
  readonly timeoutMs: number;
  readonly log?: Logger;
}

/**
 * Each topic's message-size limit, which bounds every entry and every PublishBatch's total. Read for
 * the mapped topics when the relay starts, and again for a topic whose limit may be stale: before a
 * row over it is killed (it may have been raised), and after SNS refused a message as too long (it
 * was lowered). A topic's `MaximumMessageSize` can change at any time. A read that fails leaves the limit it had, SNS's
 * default (262 144) for one never read, and says so: a limit too low kills big rows (an operator
 * can requeue them), while one too high only costs a refused request. Without a reader (a
 * publisher that is not SNS) every topic has the default.
 */
export class TopicLimits {
  readonly #known = new Map<string, number>();
  readonly #reading = new Map<string, Promise<number | undefined>>();
  readonly #read: TopicLimitReader | undefined;
  readonly #settings: TopicLimitsSettings;

  constructor(read: TopicLimitReader | undefined, settings: TopicLimitsSettings) {
    this.#read = read;
    this.#settings = settings;
  }

  /** The limit the relay plans `topicArn`'s requests with. */
  bytesFor(topicArn: string): number {
    return this.#known.get(topicArn) ?? MAX_MESSAGE_BYTES;
  }

  /** Reads every topic's limit, all at once; resolves when each read has ended, however. */
  async load(topicArns: Iterable<string>, within: Deadline): Promise<void> {
    await Promise.all([...new Set(topicArns)].map((topicArn) => this.refresh(topicArn, within)));
  }

  /**
   * Reads the topic's limit again and resolves with it, or with `undefined` when the read failed
   * (the limit stays as it was); never rejects. Reads of one topic asked for while one runs share it.
   * Without a reader the default is all there is to know: it resolves with that.
   */
  refresh(topicArn: string, within: Deadline): Promise<number | undefined> {
    if (this.#read === undefined) return Promise.resolve(this.bytesFor(topicArn));
    const running = this.#reading.get(topicArn);
    if (running) return running;
    const reading = this.#readOnce(this.#read, topicArn, within).finally(() =>
      this.#reading.delete(topicArn),
    );
    this.#reading.set(topicArn, reading);
    return reading;
  }

  async #readOnce(read: TopicLimitReader, topicArn: string, within: Deadline): Promise<number | undefined> {
    const previous = this.#known.get(topicArn);
    const deadline = Deadline.after(this.#settings.timeoutMs, within);
    try {
      // Raced as well as handed the deadline: a reader that ignores it must not hold the relay up.
      const bytes = await untilAborted(read(topicArn, deadline), deadline);
      if (!isTopicMessageLimit(bytes)) {
        throw new Error(
          `MaximumMessageSize ${bytes} is outside ${MIN_TOPIC_MESSAGE_BYTES}–${MAX_TOPIC_MESSAGE_BYTES}`,
        );
      }
      this.#known.set(topicArn, bytes);
      if (bytes !== previous) {
        this.#settings.log?.info(
          { topicArn, maxMessageBytes: bytes, previousMaxMessageBytes: previous ?? null },
          "topic message size limit read",
        );
      }
      return bytes;
    } catch (error) {
      const kept = this.bytesFor(topicArn);
      this.#settings.log?.warn(
        {
          topicArn,
          maxMessageBytes: kept,
          timeoutMs: this.#settings.timeoutMs,
          reason: deadline.aborted ? `no answer within ${this.#settings.timeoutMs} ms` : describeError(error),
        },
        "topic message size limit unreadable: keeping the limit it had (SNS's default if never read)",
      );
      return undefined;
    } finally {
      deadline.dispose();
    }
  }
}
