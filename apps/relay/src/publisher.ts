import type { Deadline } from "@outbox/client";

/**
 * Where the relay sends messages. The SNS implementation is the real one; the interface exists so a
 * benchmark (or an embedding application) can swap the bus without test-only switches in the relay.
 */
export interface Publisher {
  /**
   * Publishes up to 10 entries to one topic in one request. Resolves with the entries the bus says it
   * took and those it refused; an entry in neither list is not published (a malformed answer, retried).
   * Rejects when the request as a whole failed or `deadline` aborted, in which case the relay treats
   * every entry as not published. `deadline` bounds the call, retries included (the publish timeout,
   * the batch's lease, the drain); an implementation hands `deadline.signal` to a client that wants
   * an AbortSignal.
   */
  publishBatch(request: PublishRequest, deadline: Deadline): Promise<PublishResult>;
  /**
   * The most bytes one message to `topicArn` may have (body and attributes), which also bounds a
   * request's total: SNS's topic attribute `MaximumMessageSize`. Read at start-up and when the bus
   * refuses a message as too long; bounded by `deadline`. Optional: without it every topic has
   * SNS's default, 262 144 bytes.
   */
  messageLimit?(topicArn: string, deadline: Deadline): Promise<number>;
}

export interface PublishRequest {
  readonly topicArn: string;
  readonly entries: readonly PublishEntry[];
}

export interface PublishEntry {
  /** The event id; unique within a request, and what `PublishResult.failed` refers to. */
  readonly id: string;
  readonly message: string;
  /** String message attributes: `event_id`, `event_type` and the row's headers. */
  readonly attributes: Readonly<Record<string, string>>;
  /** FIFO topics only. */
  readonly groupId?: string;
  /** FIFO topics only. */
  readonly deduplicationId?: string;
}

export interface PublishResult {
  /** Ids of the entries the bus took (SNS's `Successful`): only these are marked published. */
  readonly published: readonly string[];
  /** The entries the bus refused (SNS's `Failed`): each one counts as a failed attempt of its row. */
  readonly failed: readonly FailedEntry[];
  /** The bus's id for the request, for the log line when its answer does not add up. */
  readonly requestId?: string;
}

export interface FailedEntry {
  readonly id: string;
  readonly reason: string;
}

/** A publisher that accepts everything at once: measures the relay's own (database-bound) cost. */
export const nullPublisher: Publisher = {
  publishBatch: async (request) => ({ published: request.entries.map((entry) => entry.id), failed: [] }),
};
