import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultConfig } from "./config.js";
import { parseFaultConfig } from "./config.js";
import type { FaultInjector } from "./injector.js";

export const FAULT_CONTROL_PATH = "/_faults";

function answer(method: string | undefined, body: string, faults: FaultInjector): [number, unknown] {
  switch (method) {
    case "GET":
      return [200, faults.config];
    case "DELETE":
      faults.clear();
      return [200, faults.config];
    case "POST":
    case "PUT":
      try {
        faults.set(parseFaultConfig(JSON.parse(body)));
        return [200, faults.config];
      } catch (error) {
        return [400, { error: error instanceof Error ? error.message : String(error) }];
      }
    default:
      return [405, { error: `method ${method} not allowed` }];
  }
}

/** `GET` reads, `POST` replaces (JSON {@link FaultConfig}), `DELETE` clears the emulator's faults. */
export function handleFaultControl(
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  faults: FaultInjector,
): void {
  const [status, reply] = answer(req.method, body, faults);
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(reply));
}
