export type { PoisonKind } from "../errors.js";
export {
  type DeliveredEvent,
  type EventToDeliver,
  type HandlerRun,
  type RunHandlersOptions,
  runHandlers,
} from "./run-handlers.js";
