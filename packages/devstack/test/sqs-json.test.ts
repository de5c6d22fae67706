import { createServer, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { SqsJsonClient } from "../src/sns/sqs-json.js";

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/**
 * An SQS stand-in on a raw socket that answers every request on a connection's first use and, on
 * the connection's second request, resets it instead: what a server's idle timeout does to a
 * kept-alive socket the client picks at that moment. Counts the requests that got an answer.
 */
async function resettingServer(): Promise<{ url: string; answered: () => number }> {
  let answered = 0;
  const server = createServer((socket: Socket) => {
    let requests = 0;
    socket.on("data", (chunk) => {
      if (!chunk.toString("latin1").includes("\r\n\r\n")) return;
      requests += 1;
      if (requests > 1) {
        socket.resetAndDestroy();
        return;
      }
      answered += 1;
      const body = "{}";
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, answered: () => answered };
}

it("sends a call again on a fresh socket when its kept-alive socket is reset under it", async () => {
  const { url, answered } = await resettingServer();
  const sqs = new SqsJsonClient(url);
  try {
    await sqs.call("GetQueueUrl", { QueueName: "first" });
    // The kept-alive socket is reused, reset, and the call goes out again on a new one.
    await expect(sqs.call("GetQueueUrl", { QueueName: "second" })).resolves.toEqual({});
    expect(answered()).toBe(2);
  } finally {
    sqs.destroy();
  }
});
