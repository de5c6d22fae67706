import { DEAD_LETTER_ID } from "@outbox/consumer/operations";
import type { DeadLetterFilter } from "../reads/dead-letters.js";
import type { DeadRowFilter } from "../reads/dead-rows.js";
import type { ActionName } from "../views/forms.js";

/** What one action takes: named items (one, a selection), or everything a filter matches (a group, a filter). */
export type ActionTargets =
  | { readonly kind: "ids"; readonly ids: readonly string[] }
  | { readonly kind: "filter"; readonly filter: DeadRowFilter & DeadLetterFilter };

export interface ActionRequest {
  readonly action: ActionName;
  readonly targets: ActionTargets;
  /** A requeue of a filter (a group) takes its skipped rows too (`skipped=1`); by default it leaves them out. */
  readonly includeSkipped: boolean;
  /**
   * The out-of-order confirmation (`out_of_order=1`): a requeue takes rows whose key already sent
   * later events, which then go out after them. Only the preview that named those events offers it.
   */
  readonly outOfOrder: boolean;
}

/** The most items one action changes: a preview beyond it says so, and the rest wait for the next one. */
export const MAX_ACTION_ITEMS = 10_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const AGES = new Set(["300", "3600", "86400"]);

/** The request's filter fields, the same names as the lists' GET forms. */
export function filterOf(fields: URLSearchParams): DeadRowFilter & DeadLetterFilter {
  const text = (name: string) => {
    const value = fields.get(name)?.trim();
    return value === undefined || value === "" ? undefined : value.slice(0, 1_000);
  };
  const older = fields.get("older") ?? "";
  return {
    topic: text("topic"),
    eventType: text("type"),
    kind: text("kind"),
    olderThanSeconds: AGES.has(older) ? Number(older) : undefined,
  };
}

/** The action a form asks for; a string saying what is wrong with it otherwise (answered 400). */
export function parseActionRequest(fields: URLSearchParams): ActionRequest | string {
  const action = fields.get("action");
  if (action !== "requeue" && action !== "skip" && action !== "redrive") {
    return "no action, or an unknown one: requeue, skip or redrive";
  }
  const ids = [...fields.getAll("id"), ...(fields.get("ids") ?? "").split(",")]
    .map((id) => id.trim())
    .filter((id) => id !== "");
  if (ids.length > MAX_ACTION_ITEMS) return `at most ${MAX_ACTION_ITEMS} items in one action`;
  const shape = action === "redrive" ? DEAD_LETTER_ID : UUID;
  const bad = ids.find((id) => !shape.test(id));
  if (bad !== undefined)
    return action === "redrive" ? "a message id is malformed" : "an event id is not a UUID";
  const options = {
    includeSkipped: fields.get("skipped") === "1",
    outOfOrder: fields.get("out_of_order") === "1",
  };
  if (ids.length > 0) return { action, targets: { kind: "ids", ids: [...new Set(ids)] }, ...options };
  if (fields.get("scope") === "selected") return "nothing selected: tick the rows to act on";
  return { action, targets: { kind: "filter", filter: filterOf(fields) }, ...options };
}
