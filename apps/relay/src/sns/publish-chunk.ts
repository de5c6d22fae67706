import { performance } from "node:perf_hooks";
import { context, trace } from "@opentelemetry/api";
import { Deadline } from "@outbox/client";
import { thrownParts } from "@outbox/client/internal";
import type { Logger } from "@outbox/shared";
import type { RelayMetrics, RequestFailureKind } from "../metrics.js";
import type { ClaimedRow } from "../outbox-store.js";
import type { Chunk } from "./entries.js";
import { startPublishSpans } from "./publish-span.js";
import type { Publisher, PublishResult } from "./publisher.js";

/** A 200 whose lists do not account for the request's entries: what the log line says about it. */
export interface MalformedAnswer {
  readonly requestId: string | undefined;
  readonly entries: number;
  readonly successful: number;
  readonly failed: number;
  /** Entries in neither list (all of them for an empty body): not published, retried. */
  readonly unlisted: number;
  /** Ids listed that the request did not carry, or listed as both taken and refused. */
  readonly unexpected: number;
}

export interface RequestFailure {
  readonly kind: RequestFailureKind;
  readonly reason: string;
  /** SNS's id of the request, when an answer came back. */
  readonly requestId?: string;
}

export interface ChunkOutcome {
  /** `performance.now()` when the request went out. */
  readonly sentAt: number;
  readonly published: ClaimedRow[];
  /** Entries SNS refused: each row's own failure, an attempt. */
  readonly refused: { readonly row: ClaimedRow; readonly reason: string }[];
  /** Not published because the request failed as a whole (or its answer was malformed): no attempt. */
  readonly unanswered: ClaimedRow[];
  /** Why the request failed as a whole, when it did (every row unanswered, or the answer malformed). */
  readonly requestFailure?: RequestFailure;
  readonly malformed?: MalformedAnswer;
  /** Cut off by the batch's deadline (drain deadline or lease end): outcome unknown, not an attempt. */
  readonly abandoned: ClaimedRow[];
}

export interface ChunkPublisher {
  /**
   * Sends one chunk, bounded by the publish timeout (all SDK retries included, a failure of the
   * request as a whole) within `batch`, the batch's deadline (its lease, or the drain): `batch`
   * aborting means the relay must let go of the rows, which is not the rows' fault. A row counts as
   * published only when the answer lists it under `Successful`.
   */
  publish(chunk: Chunk, batch: Deadline): Promise<ChunkOutcome>;
  /** PublishBatch requests sent and not answered yet: what a forced exit would abandon. */
  requestsInFlight(): number;
}

export interface ChunkPublisherSettings {
  /** The longest one request may take, all SDK attempts included. */
  readonly timeoutMs: number;
  readonly metrics: RelayMetrics;
  readonly log?: Logger;
}

const NONE_REFUSED: ReadonlySet<string> = new Set();

export function createChunkPublisher(
  publisher: Publisher,
  { timeoutMs, metrics, log }: ChunkPublisherSettings,
): ChunkPublisher {
  let requests = 0;
  const send = async (chunk: Chunk, batch: Deadline): Promise<ChunkOutcome> => {
    const call = Deadline.after(timeoutMs, batch);
    const sentAt = performance.now();
    const spans = startPublishSpans(chunk);
    requests += 1;
    metrics.requestsInFlight.inc();
    try {
      // Inside the span, so that spans of the HTTP call (if the SDK is instrumented) nest under it.
      const result = await context.with(trace.setSpan(context.active(), spans.request), () =>
        publisher.publishBatch({ topicArn: chunk.topicArn, entries: spans.entries }, call),
      );
      const outcome = sortAnswer(chunk, result, sentAt);
      if (outcome.requestFailure) metrics.requestFailures.inc({ kind: outcome.requestFailure.kind });
      spans.end({
        refusedIds:
          outcome.refused.length === 0 ? NONE_REFUSED : new Set(outcome.refused.map(({ row }) => row.id)),
        error: outcome.requestFailure?.reason,
      });
      return outcome;
    } catch (error) {
      const thrown = thrownParts(error);
      const reason = thrown.name === undefined ? thrown.message : `${thrown.name}: ${thrown.message}`;
      if (batch.aborted) {
        spans.end({ refusedIds: NONE_REFUSED, error: `abandoned: ${reason}` });
        return { sentAt, published: [], refused: [], unanswered: [], abandoned: chunk.rows };
      }
      const kind = requestFailureKind(error);
      metrics.requestFailures.inc({ kind });
      spans.end({ refusedIds: NONE_REFUSED, error: reason });
      const requestId = (error as { $metadata?: { requestId?: string } } | null)?.$metadata?.requestId;
      return {
        sentAt,
        published: [],
        refused: [],
        unanswered: chunk.rows,
        requestFailure: { kind, reason, requestId },
        abandoned: [],
      };
    } finally {
      requests -= 1;
      metrics.requestsInFlight.dec();
      metrics.publishSeconds.observe((performance.now() - sentAt) / 1_000);
      call.dispose();
    }
  };
  return {
    async publish(chunk, batch) {
      const outcome = await send(chunk, batch);
      logMalformed(chunk, outcome, log);
      return outcome;
    },
    requestsInFlight: () => requests,
  };
}

/** Logs, once per answer, what does not add up in it, with SNS's request id. */
function logMalformed(chunk: Chunk, outcome: ChunkOutcome, log: Logger | undefined): void {
  const { malformed, requestFailure } = outcome;
  if (!malformed && requestFailure?.kind !== "malformed") return;
  log?.warn(
    {
      topicArn: chunk.topicArn,
      requestId: malformed?.requestId ?? requestFailure?.requestId,
      ...malformed,
      reason: requestFailure?.reason,
    },
    "PublishBatch answer malformed: entries it does not list as successful are retried",
  );
}

/** Each row by what the answer says of it; ids in neither list, or in both, are not taken as published. */
function sortAnswer(chunk: Chunk, result: PublishResult, sentAt: number): ChunkOutcome {
  const taken = new Set(result.published);
  const refusals = new Map(result.failed.map((entry) => [entry.id, entry.reason]));
  const outcome = {
    sentAt,
    published: [] as ClaimedRow[],
    refused: [] as { row: ClaimedRow; reason: string }[],
    unanswered: [] as ClaimedRow[],
    abandoned: [] as ClaimedRow[],
  };
  let contradictory = 0;
  for (const row of chunk.rows) {
    const reason = refusals.get(row.id);
    if (reason !== undefined && taken.has(row.id)) {
      contradictory += 1;
      outcome.unanswered.push(row);
    } else if (reason !== undefined) outcome.refused.push({ row, reason });
    else if (taken.has(row.id)) outcome.published.push(row);
    else outcome.unanswered.push(row);
  }
  const sent = new Set(chunk.rows.map((row) => row.id));
  const unknown = [...taken, ...refusals.keys()].filter((id) => !sent.has(id)).length;
  if (outcome.unanswered.length === 0 && unknown === 0) return outcome;
  const malformed: MalformedAnswer = {
    requestId: result.requestId,
    entries: chunk.rows.length,
    successful: result.published.length,
    failed: result.failed.length,
    unlisted: outcome.unanswered.length - contradictory,
    unexpected: unknown + contradictory,
  };
  if (outcome.unanswered.length === 0) return { ...outcome, malformed };
  return {
    ...outcome,
    malformed,
    requestFailure: {
      kind: "malformed",
      requestId: result.requestId,
      reason: `malformed PublishBatch answer (request ${result.requestId ?? "without id"}): ${outcome.unanswered.length} of ${chunk.rows.length} entries in neither Successful nor Failed`,
    },
  };
}

/** What kind of whole-request failure an SDK error is, for the metric. */
function requestFailureKind(error: unknown): RequestFailureKind {
  const { name, $metadata, $retryable } = (error ?? {}) as {
    name?: string;
    $metadata?: { httpStatusCode?: number };
    $retryable?: { throttling?: boolean };
  };
  const status = $metadata?.httpStatusCode;
  if ($retryable?.throttling || status === 429 || /thrott/i.test(name ?? "")) return "throttling";
  if (status === undefined) return "network";
  // A 200 the SDK could not parse (truncated, an HTML page).
  if (status < 300) return "malformed";
  return status >= 500 ? "server" : "client";
}
