import { connect, type Socket } from "node:net";

// Connections as the stop tests need them: below any HTTP client, which would hide the
// keep-alive connection and the moment a request arrives.

/** What a connection attempt meets: accepted, or refused (nothing listens). */
export function connectOutcome(port: number): Promise<"accepted" | "refused" | string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("accepted");
    });
    socket.once("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ECONNREFUSED" ? "refused" : String(error.code)),
    );
  });
}

/**
 * A raw keep-alive connection: `exchange` sends a request and resolves with the whole answer (its
 * head and its Content-Length of body); `closed` resolves with whatever came after the last answer.
 */
export async function rawConnection(port: number) {
  const socket: Socket = connect(port, "127.0.0.1");
  // A reset shows as an empty answer; it is not an error of the test.
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = "";
  let wake = () => {};
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
    wake();
  });
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  const answer = () =>
    new Promise<string>((resolve) => {
      const check = () => {
        const headEnd = received.indexOf("\r\n\r\n");
        const length = Number(/^content-length: *(\d+)/im.exec(received.slice(0, headEnd))?.[1] ?? 0);
        if (headEnd === -1 || received.length < headEnd + 4 + length) return;
        const whole = received.slice(0, headEnd + 4 + length);
        received = received.slice(whole.length);
        resolve(whole);
      };
      wake = check;
      check();
      void closed.then(() => resolve(received));
    });
  return { write: (text: string) => socket.write(text), answer, closed };
}
