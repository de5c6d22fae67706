import type { PublishStats } from "../../stats/stats.js";
import type { FanOut } from "../fan-out.js";
import type { FaultInjector } from "../faults/injector.js";
import type { QueryParams } from "../query.js";
import type { Registry } from "../registry.js";
import type { XmlObject } from "../xml.js";

export interface ActionContext {
  readonly params: QueryParams;
  readonly registry: Registry;
  readonly fanOut: FanOut;
  readonly faults: FaultInjector;
  readonly stats: PublishStats;
}

/** Executes one SNS action; returns the `<XxxResult>` content, or null for actions without output. */
export type Action = (context: ActionContext) => Promise<XmlObject | null> | XmlObject | null;
