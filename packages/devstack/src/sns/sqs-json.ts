import { Agent, request } from "node:http";

/** An SQS error answered over the JSON protocol (`__type` + `message`). */
export class SqsCallError extends Error {
  constructor(
    readonly action: string,
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(`SQS ${action} failed (${status} ${type}): ${message}`);
    this.name = "SqsCallError";
  }
}

/**
 * A minimal SQS client for the fan-out's hot path: the JSON protocol (`x-amz-target`) over a
 * keep-alive agent, unsigned. The SDK client spent most of the emulator's CPU on middleware and
 * SigV4 hashing that a local SQS does not check; this costs a JSON.stringify and one request.
 * Only for local SQS servers (local-aws-sqs, LocalStack): real SQS would reject unsigned calls.
 */
export class SqsJsonClient {
  readonly #agent: Agent;
  readonly #url: URL;

  constructor(
    endpoint: string,
    private readonly timeoutMs = 30_000,
  ) {
    this.#url = new URL(endpoint);
    // Enough sockets for every concurrent publisher's fan-out; LIFO keeps the hot ones warm.
    this.#agent = new Agent({ keepAlive: true, maxSockets: 128, scheduling: "lifo" });
  }

  async call<T>(action: string, input: unknown): Promise<T> {
    const body = JSON.stringify(input);
    try {
      return await this.#send<T>(action, body);
    } catch (error) {
      // A kept-alive socket the server closed as this request went out (its idle timeout) resets:
      // the request never reached it, so it is sent once more on a fresh socket, as Node's docs
      // advise. Without this a fan-out under load lost a message now and then (AWS's SNS retries
      // its deliveries to SQS too).
      if (!(error instanceof StaleSocketError)) throw error;
      return await this.#send<T>(action, body);
    }
  }

  #send<T>(action: string, body: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const req = request(
        {
          agent: this.#agent,
          host: this.#url.hostname,
          port: this.#url.port,
          path: "/",
          method: "POST",
          timeout: this.timeoutMs,
          headers: {
            "content-type": "application/x-amz-json-1.0",
            "x-amz-target": `AmazonSQS.${action}`,
            "content-length": Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: Record<string, unknown> = {};
            try {
              parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
            } catch {
              parsed = { message: text };
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve(parsed as T);
            else {
              const type = String(parsed.__type ?? parsed.code ?? "UnknownError").replace(/^.*#/, "");
              reject(
                new SqsCallError(action, status, type, String(parsed.message ?? parsed.Message ?? text)),
              );
            }
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`SQS ${action} timed out after ${this.timeoutMs} ms`)));
      req.on("error", (error: NodeJS.ErrnoException) =>
        reject(req.reusedSocket && error.code === "ECONNRESET" ? new StaleSocketError(error) : error),
      );
      req.end(body);
    });
  }

  destroy(): void {
    this.#agent.destroy();
  }
}

/** A kept-alive socket reset before it carried the request: safe to send again. */
class StaleSocketError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}
