import { type MessageAttributeValue, PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { Publisher, PublishRequest, PublishResult } from "./publisher.js";

/**
 * Each call's signal, by its command's input: the SDK hands that very object down to its last
 * middleware. Per-call options (`send(command, { abortSignal })`) would carry the signal too, but a
 * client then composes its middleware stack anew on every call, skipping `cacheMiddleware`.
 * Never deleted: after the caller has given up, an SDK retry may still reach the last middleware,
 * which must find the signal (aborted) there; the entry goes when the input is collected.
 */
const callSignals = new WeakMap<object, AbortSignal>();
const clientsWithSignals = new WeakSet<SNSClient>();
const SIGNAL_MIDDLEWARE = "outboxCallSignal";

/**
 * Hands each call's signal to the HTTP handler. Innermost (after signing, retries and parsing), so it
 * sends the request itself as the client's last step would, with the signal added: an abort destroys
 * the request in flight, and an SDK retry after the abort is refused before it is sent.
 */
function passSignalsToHttp(client: SNSClient): void {
  if (clientsWithSignals.has(client)) return;
  clientsWithSignals.add(client);
  client.middlewareStack.add(
    (next) => (args) => {
      const signal = callSignals.get(args.input);
      if (signal === undefined) return next(args);
      return client.config.requestHandler.handle(args.request, { abortSignal: signal });
    },
    { step: "deserialize", priority: "low", name: SIGNAL_MIDDLEWARE },
  );
}

/**
 * Settles with `work`, or rejects at once when `signal` aborts: the SDK's wait between retries, which
 * only a per-call signal would cut short, does not hold the caller up.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** What the SDK's HTTP handler throws on an abort, so a cut call reads the same either way. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error("Request aborted", { cause: signal.reason }), { name: "AbortError" });
}

/** The real bus: one `PublishBatch` per request; the caller's signal cancels the HTTP call. */
export function createSnsPublisher(client: SNSClient): Publisher {
  passSignalsToHttp(client);
  return {
    async publishBatch(request: PublishRequest, signal: AbortSignal): Promise<PublishResult> {
      const input = {
        TopicArn: request.topicArn,
        PublishBatchRequestEntries: request.entries.map((entry) => ({
          Id: entry.id,
          Message: entry.message,
          MessageAttributes: toAttributes(entry.attributes),
          MessageGroupId: entry.groupId,
          MessageDeduplicationId: entry.deduplicationId,
        })),
      };
      callSignals.set(input, signal);
      const sent = client.send(new PublishBatchCommand(input));
      // Still settles after an abort (the handler refuses or cuts the request): nobody awaits it then.
      sent.catch(() => {});
      const response = await untilAborted(sent, signal);
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
