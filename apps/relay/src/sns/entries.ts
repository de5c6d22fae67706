import {
  headersProblem,
  MAX_BATCH_ENTRIES,
  measureMessage,
  messageAttributes,
} from "@outbox/client/internal";
import { claimCheckAgeProblem } from "../claim-check-age.js";
import type { ClaimedRow } from "../outbox-store.js";
import type { PublishEntry } from "./publisher.js";

/** MessageGroupId: 1–128 printable ASCII characters. */
const GROUP_ID = /^[\x21-\x7e]{1,128}$/;

/** Maps the logical `topic` column to a topic ARN; `undefined` when nothing is configured for it. */
export type TopicResolver = (topic: string) => string | undefined;

/** The message-size limit the relay knows for a topic ARN (its `MaximumMessageSize`). */
export type LimitResolver = (topicArn: string) => number;

export type BuiltEntry =
  | {
      readonly kind: "ready";
      readonly topicArn: string;
      readonly entry: PublishEntry;
      readonly bytes: number;
      readonly limitBytes: number;
    }
  | {
      /** Over the topic's limit as the relay knows it: worth one re-read of the limit before it dies. */
      readonly kind: "oversize";
      readonly topicArn: string;
      readonly bytes: number;
      readonly limitBytes: number;
      readonly reason: string;
    }
  | { readonly kind: "unsendable"; readonly reason: string };

/**
 * The message a row becomes, or why it can never be sent. Rows that can never be sent die at once:
 * retrying identical bytes against the same limits would only burn attempts and block their key.
 * A claim-checked row older than `claimCheckSendWithinHours` is one (claimCheckAgeProblem).
 */
export function buildEntry(
  row: ClaimedRow,
  resolveTopic: TopicResolver,
  limitFor: LimitResolver,
  claimCheckSendWithinHours: number,
): BuiltEntry {
  const aged = claimCheckAgeProblem(row, claimCheckSendWithinHours);
  if (aged !== undefined) return { kind: "unsendable", reason: aged };
  const topicArn = resolveTopic(row.topic);
  if (topicArn === undefined) {
    return {
      kind: "unsendable",
      reason: `unknown topic "${row.topic}": not in RELAY_TOPIC_ARNS, no default`,
    };
  }
  const badHeaders = headersProblem(row.headers);
  if (badHeaders !== undefined) return { kind: "unsendable", reason: badHeaders };
  const attributes = messageAttributes(row.id, row.eventType, row.headers);
  // The same measure `enqueue` applied to the same text, against the topic's own limit: a row it
  // accepted with the topic's `maxMessageBytes` fits.
  const limitBytes = limitFor(topicArn);
  const { bytes, problem } = measureMessage(row.payload, attributes, limitBytes);
  if (problem !== undefined) {
    return {
      kind: "oversize",
      topicArn,
      bytes,
      limitBytes,
      reason: `${problem} (MaximumMessageSize of ${topicArn})`,
    };
  }

  if (!topicArn.endsWith(".fifo")) {
    return {
      kind: "ready",
      topicArn,
      bytes,
      limitBytes,
      entry: { id: row.id, message: row.payload, attributes },
    };
  }
  // FIFO: the ordering key is the message group, so SNS keeps each key's order and nothing more.
  // Rows without a key get their own group (their id): they promised no order, so they should not
  // queue behind each other. The event id deduplicates a re-send within SNS's 5-minute window.
  const groupId = row.orderingKey ?? row.id;
  if (!GROUP_ID.test(groupId)) {
    return {
      kind: "unsendable",
      reason: "ordering key is not a valid FIFO MessageGroupId (1–128 printable ASCII)",
    };
  }
  return {
    kind: "ready",
    topicArn,
    bytes,
    limitBytes,
    entry: { id: row.id, message: row.payload, attributes, groupId, deduplicationId: row.id },
  };
}

export interface ReadyRow {
  readonly row: ClaimedRow;
  readonly topicArn: string;
  readonly entry: PublishEntry;
  readonly bytes: number;
  /** The topic's limit the entry was checked against: each entry's, and its request's total. */
  readonly limitBytes: number;
}

/**
 * One PublishBatch request: one topic, ≤ 10 entries, their sum within the topic's limit (SNS bounds
 * a PublishBatch by the topic's MaximumMessageSize, as one message: 256 KiB by default, 1 MiB at most).
 */
export interface Chunk {
  readonly topicArn: string;
  readonly rows: ClaimedRow[];
  readonly entries: PublishEntry[];
  bytes: number;
}

/** Packs rows into requests, per topic, keeping seq order within a topic: takeChunk until none is left. */
export function planChunks(ready: readonly ReadyRow[]): Chunk[] {
  const left = [...ready];
  const chunks: Chunk[] = [];
  while (left.length > 0) chunks.push(takeChunk(left));
  return chunks;
}

/**
 * Takes the next request out of `ready`: the first row's topic, up to 10 of its rows within the
 * topic's limit, in `ready`'s order. The rows in `ready` share no key (each key's next row joins it
 * only once the one before was marked), so which of them go together does not touch any order.
 */
export function takeChunk(ready: ReadyRow[]): Chunk {
  const [head] = ready;
  if (head === undefined) throw new Error("takeChunk: nothing ready");
  const chunk: Chunk = { topicArn: head.topicArn, rows: [], entries: [], bytes: 0 };
  let kept = 0;
  for (const item of ready) {
    if (
      chunk.entries.length < MAX_BATCH_ENTRIES &&
      item.topicArn === chunk.topicArn &&
      chunk.bytes + item.bytes <= head.limitBytes
    ) {
      chunk.rows.push(item.row);
      chunk.entries.push(item.entry);
      chunk.bytes += item.bytes;
    } else {
      ready[kept] = item;
      kept += 1;
    }
  }
  ready.length = kept;
  return chunk;
}
