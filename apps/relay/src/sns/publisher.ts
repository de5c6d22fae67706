import {
  GetTopicAttributesCommand,
  type MessageAttributeValue,
  PublishBatchCommand,
  type SNSClient,
} from "@aws-sdk/client-sns";
import type { Deadline } from "@outbox/client";
import { MAX_MESSAGE_BYTES } from "@outbox/client/internal";
import { untilAborted } from "@outbox/shared";
import { PublishAbortedError } from "../errors.js";
import { sendWithSignal } from "./call-signal.js";

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
   * request's total: SNS's topic attribute `MaximumMessageSize`. Read at start-up, before an event
   * over the limit known is marked dead, and after the bus refused a message as too long; bounded by
   * `deadline`. Optional: without it every topic has SNS's default, 262 144 bytes.
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

/**
 * The real bus: one `PublishBatch` per request; the call's deadline cancels the HTTP call. Each
 * topic's limit is its `MaximumMessageSize` (GetTopicAttributes).
 */
export function createSnsPublisher(client: SNSClient): Publisher {
  return {
    messageLimit: (topicArn, deadline) => readTopicMessageLimit(client, topicArn, deadline),
    async publishBatch(request: PublishRequest, deadline: Deadline): Promise<PublishResult> {
      const command = new PublishBatchCommand({
        TopicArn: request.topicArn,
        PublishBatchRequestEntries: request.entries.map((entry) => ({
          Id: entry.id,
          Message: entry.message,
          MessageAttributes: toAttributes(entry.attributes),
          MessageGroupId: entry.groupId,
          MessageDeduplicationId: entry.deduplicationId,
        })),
      });
      // The signal is the SDK's boundary: the HTTP handler takes nothing else.
      const sent = sendWithSignal(client, command, deadline.signal);
      let response: Awaited<typeof sent>;
      try {
        // Not only `sent`: the SDK's wait between retries, which the signal does not cut short,
        // must not hold the caller up. `sent` still settles after an abort; nobody awaits it then.
        response = await untilAborted(sent, deadline);
      } catch (error) {
        if (deadline.aborted) throw new PublishAbortedError("Request aborted", { cause: error });
        throw error;
      }
      // Taken as they are, absent lists included: an empty 200 (a proxy, a lying endpoint) parses into
      // a response with neither list, and must not read as "nothing failed".
      return {
        published: (response.Successful ?? []).map((entry) => entry.Id ?? ""),
        requestId: response.$metadata.requestId,
        failed: (response.Failed ?? []).map((failure) => ({
          id: failure.Id ?? "",
          reason: `${failure.Code ?? "Failed"}: ${failure.Message ?? "no message"}`,
        })),
      };
    },
  };
}

function toAttributes(attributes: Readonly<Record<string, string>>): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes))
    out[name] = { DataType: "String", StringValue: value };
  return out;
}

/**
 * A topic's `MaximumMessageSize` as SNS reports it: GetTopicAttributes returns the attribute only
 * once it has been set, and a topic without it takes SNS's default (262 144). A value that is not a
 * whole number is thrown as an error: the caller decides what to fall back to.
 */
async function readTopicMessageLimit(
  client: SNSClient,
  topicArn: string,
  deadline: Deadline,
): Promise<number> {
  // The per-call signal (which `sendWithSignal` avoids on the hot path) is fine here: this runs at
  // start-up and when a size is in doubt, not per PublishBatch.
  const answer = await untilAborted(
    client.send(new GetTopicAttributesCommand({ TopicArn: topicArn }), { abortSignal: deadline.signal }),
    deadline,
  );
  const value = answer.Attributes?.MaximumMessageSize;
  if (value === undefined) return MAX_MESSAGE_BYTES;
  if (!/^\d+$/.test(value)) throw new Error(`MaximumMessageSize is not a whole number: "${value}"`);
  return Number(value);
}
