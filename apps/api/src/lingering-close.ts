import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/**
 * The most a lingering close discards after its answer before it closes anyway: 64 times the body
 * limit. A client that misjudged the limit (10 MiB against 1 MiB) still finishes sending and reads
 * its answer; one that goes on past this is not mistaken, and is not owed the bandwidth.
 */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/** Which bound cut a lingering close short of the client's own close. */
export type LingerBound = "bytes" | "time";

export interface LingeringClose {
  /**
   * The connection of `request`, whose answer is being sent before its body has arrived, closes
   * with a lingering close once that answer is written: the answer goes out with `Connection: close`
   * (the caller sets it), then the server sends its FIN and reads and discards whatever the client
   * still sends, until the client closes, {@link LINGER_MAX_BYTES} have been discarded, or `forMs`
   * has passed; then the connection is destroyed.
   */
  closeAfterAnswer(request: IncomingMessage, forMs: number): void;
  /** Whether `socket` has had its last answer: nothing more is answered or served on it. */
  isClosing(socket: Socket): boolean;
}

/**
 * Lingering close, as nginx and Apache do it. Closing a connection while its client is still
 * sending makes the kernel answer the unread bytes with a reset; a client that sends its whole body
 * before it reads (most do: Python's http.client, curl without Expect) then sees EPIPE or
 * ECONNRESET instead of the answer already in its receive buffer. Reading until the client is done
 * lets every such client read it, and the bounds keep a client from holding the connection or
 * streaming into it for as long as it likes.
 */
export function lingeringClose(onCut: (bound: LingerBound, discardedBytes: number) => void): LingeringClose {
  const closing = new WeakSet<Socket>();
  return {
    closeAfterAnswer(request, forMs) {
      const { socket } = request;
      if (closing.has(socket)) return;
      closing.add(socket);
      let discarded = 0;
      const cut = (bound: LingerBound) => {
        if (socket.destroyed) return;
        onCut(bound, discarded);
        socket.destroy();
      };
      const timer = setTimeout(() => cut("time"), forMs);
      socket.once("close", () => clearTimeout(timer));
      // Read here, and dropped: a request nobody reads would be dumped by Node once its answer is
      // written, which discards the body just the same but where it cannot be counted.
      request.on("data", (chunk: Buffer) => {
        discarded += chunk.length;
        if (discarded > LINGER_MAX_BYTES) cut("bytes");
      });
      // Node's HTTP server calls `destroySoon` once the last answer on a connection (`Connection:
      // close`) is written, and Node's own destroys the socket as soon as that answer is flushed.
      // Instead: the FIN after the answer (the client learns that nothing more is coming), and the
      // socket destroyed once the client is done too, when closing resets nothing.
      Object.assign(socket, {
        destroySoon: () => {
          socket.end();
          socket.once("end", () => socket.destroy());
        },
      });
    },
    isClosing: (socket) => closing.has(socket),
  };
}
