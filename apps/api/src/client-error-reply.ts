import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";

export interface ClientTimeouts {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

/** A refusal Node raises before any request exists (no Fastify reply): its status and message. */
function refusal(code: string | undefined, timeouts: ClientTimeouts): { status: number; message: string } {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT")
    return {
      status: 408,
      message: `the request did not arrive in time: its headers must come within ${timeouts.headersTimeoutMs} ms, all of it within ${timeouts.requestTimeoutMs} ms`,
    };
  if (code === "HPE_HEADER_OVERFLOW")
    return {
      status: 431,
      message: `the request's headers are larger than the ${maxHeaderSize} bytes accepted`,
    };
  return { status: 400, message: `the request is not valid HTTP/1.1 (${code ?? "unparsable"})` };
}

/**
 * Node's `clientError` (a timeout, a malformed request) answered in the service's error shape, then the
 * connection destroyed. Not answered again when the connection's request already has its answer:
 * one that was answered before its body had arrived (a 413, a 408) keeps the connection while the
 * rest of the body is discarded, and the request timeout that ends it must not add a second answer.
 */
export function answerClientError(
  error: Error,
  socket: Socket,
  alreadyAnswered: boolean,
  timeouts: ClientTimeouts,
): void {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== "ECONNRESET" && !alreadyAnswered && socket.writable) {
    const { status, message } = refusal(code, timeouts);
    const body = JSON.stringify({ error: message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
