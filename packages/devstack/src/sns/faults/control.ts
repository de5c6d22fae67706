import type { IncomingMessage, ServerResponse } from "node:http";
import { describeError } from "@outbox/client/internal";
import { parseFaultConfig, parseFaultScope } from "./config.js";
import type { FaultInjector } from "./injector.js";

export const FAULT_CONTROL_PATH = "/_faults";

function answer(method: string | undefined, body: string, faults: FaultInjector): [number, unknown] {
  try {
    switch (method) {
      case "GET":
        return [200, faults.rules];
      case "DELETE":
        faults.clear(body.trim() === "" ? undefined : parseFaultScope(JSON.parse(body)));
        return [200, faults.rules];
      case "POST":
      case "PUT":
        faults.set(parseFaultConfig(JSON.parse(body)));
        return [200, faults.rules];
      default:
        return [405, { error: `method ${method} not allowed` }];
    }
  } catch (error) {
    return [400, { error: describeError(error) }];
  }
}

/**
 * The emulator's fault rules ({@link FaultRules}): `GET` reads them all; `POST` sets one rule
 * (JSON {@link FaultConfig}), replacing only the rules of its scope; `DELETE` with a JSON
 * {@link FaultScope} body clears that scope, without a body every rule. Each answers with all rules.
 */
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
