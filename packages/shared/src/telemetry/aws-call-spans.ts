import type { MiddlewareStack } from "@smithy/types";
import { inClientSpan } from "./client-call-span.js";

interface TracedClient {
  // biome-ignore lint/suspicious/noExplicitAny: every SDK client's stack, whatever its input and output types.
  readonly middlewareStack: MiddlewareStack<any, any>;
}

/**
 * Each call of the client, attempts and retries included, as one CLIENT span (`SQS.DeleteMessageBatch`)
 * with OpenTelemetry's RPC attributes and the AWS request id, under the caller's span (see
 * inClientSpan). Added when the client is built, before its first call, so `cacheMiddleware` still
 * composes the stack once.
 */
export function traceAwsCalls<C extends TracedClient>(client: C): C {
  client.middlewareStack.add(
    (next, handlerContext) => (args) => {
      return inClientSpan(
        () => {
          const service = String(handlerContext.clientName ?? "AWS").replace(/Client$/, "");
          const method = String(handlerContext.commandName ?? "call").replace(/Command$/, "");
          return {
            name: `${service}.${method}`,
            attributes: { "rpc.system": "aws-api", "rpc.service": service, "rpc.method": method },
          };
        },
        () => next(args),
        (span, result) => {
          const requestId = (result.output as { $metadata?: { requestId?: string } } | undefined)?.$metadata
            ?.requestId;
          if (requestId !== undefined) span.setAttribute("aws.request_id", requestId);
        },
      );
    },
    { step: "initialize", name: "outboxCallSpan", override: true },
  );
  return client;
}
