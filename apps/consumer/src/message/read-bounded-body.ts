import type { Deadline } from "@outbox/client";

/** A body read whole, or one that went past its bound: `readBytes` is how far the read got. */
export type BoundedBody =
  | { readonly over: false; readonly bytes: Buffer }
  | { readonly over: true; readonly readBytes: number };

/** What GetObject's Body is in Node: a stream of byte chunks that can be torn down. */
interface ChunkStream extends AsyncIterable<Uint8Array> {
  destroy(error?: Error): void;
}

/**
 * Reads `body` chunk by chunk up to `limit` bytes and no further: past it, the stream is destroyed
 * (its connection closed) and what was read is dropped, so a body never costs more than the bound
 * and one chunk, whatever its length header said. Ends with the deadline's reason when it aborts
 * mid-read: a body that stops half-way must not outlive the deadline either.
 */
export async function readBoundedBody(
  body: ChunkStream,
  limit: number,
  deadline: Deadline,
): Promise<BoundedBody> {
  const unlink = deadline.onAbort((reason) => body.destroy(reason instanceof Error ? reason : undefined));
  const chunks: Uint8Array[] = [];
  let readBytes = 0;
  try {
    for await (const chunk of body) {
      readBytes += chunk.byteLength;
      if (readBytes > limit) {
        body.destroy();
        return { over: true, readBytes };
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (deadline.aborted) throw deadline.signal.reason;
    throw error;
  } finally {
    unlink();
  }
  if (deadline.aborted) throw deadline.signal.reason;
  return { over: false, bytes: Buffer.concat(chunks, readBytes) };
}
