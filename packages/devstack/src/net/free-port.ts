import { createServer } from "node:net";

/**
 * Asks the kernel for a free port on 127.0.0.1. Only for servers that need the number up front
 * (Postgres); another process may grab it before use, so callers retry on a bind failure.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
