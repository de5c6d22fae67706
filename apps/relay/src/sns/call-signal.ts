import type { PublishBatchCommand, PublishBatchCommandOutput, SNSClient } from "@aws-sdk/client-sns";

/**
 * Sends a command with an AbortSignal the client's HTTP handler honours, without the SDK's per-call
 * option. `send(command, { abortSignal })` would carry the signal too, but with per-call options a
 * client composes its middleware stack anew on every call, skipping `cacheMiddleware`: a cost paid
 * on every PublishBatch. So the signal rides beside the command instead, keyed by the command's
 * input, the object the SDK hands down to its last middleware.
 *
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

/** `client.send(command)`, its HTTP requests (retries included) cut when `signal` aborts. */
export function sendWithSignal(
  client: SNSClient,
  command: PublishBatchCommand,
  signal: AbortSignal,
): Promise<PublishBatchCommandOutput> {
  passSignalsToHttp(client);
  callSignals.set(command.input, signal);
  return client.send(command);
}
