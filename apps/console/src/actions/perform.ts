import type { OutboxTables as Database } from "@outbox/client";
import {
  type RequeueCandidate,
  type RequeueFate,
  requeueCandidates,
  requeueDeadRows,
  requeueFate,
  skipDeadRows,
} from "@outbox/relay/operations";
import type { Logger } from "@outbox/shared";
import type { Kysely } from "kysely";
import { type DeadLetterDesk, matchesLetter } from "../reads/dead-letters.js";
import { type DeadRowFilter, deadRowIds } from "../reads/dead-rows.js";
import type { ActionName } from "../views/forms.js";
import { type ActionRequest, MAX_ACTION_ITEMS } from "./action-request.js";

export interface ActionDeps {
  readonly db: Kysely<Database>;
  /** Null when the console has no DLQ configured: a redrive is refused. */
  readonly desk: DeadLetterDesk | null;
  /** RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS, which a requeue obeys as `relay requeue-dead` does. */
  readonly claimCheckSendWithinHours: number;
  readonly log: Logger;
}

/** What an action will change, named: the confirmation carries exactly these ids, nothing found later. */
export interface ActionPreview {
  readonly action: ActionName;
  readonly ids: readonly string[];
  /** More matched than one action takes (MAX_ACTION_ITEMS): the rest are left for the next one. */
  readonly capped: boolean;
  /** What was asked, for the log line: the filter's fields, or how many ids were named. */
  readonly asked: Readonly<Record<string, string | number>>;
  /** A requeue's: what will happen to each row and its key (requeueFate). */
  readonly requeue?: RequeuePreview;
}

/** What a requeue will do, row by row, and the ids each of its confirmations takes. */
export interface RequeuePreview {
  /** Every matched row with its fate, in seq order (the ids above are the "requeued" ones). */
  readonly rows: readonly { readonly row: RequeueCandidate; readonly fate: RequeueFate }[];
  /** What the out-of-order confirmation takes: the ids, and the rows whose key already sent later events. */
  readonly outOfOrderIds: readonly string[];
  /** The filter asked (a group), so that the preview can be asked again with its skipped rows. */
  readonly filter: DeadRowFilter | null;
}

/** How an action ended, in the commands' own counts. */
export type ActionOutcome =
  | {
      readonly action: "requeue";
      readonly requeued: number;
      readonly refused: readonly string[];
      /** Left dead: their key sent later events meanwhile (no out-of-order confirmation). */
      readonly overtaken: readonly string[];
    }
  | { readonly action: "skip"; readonly skipped: number }
  | {
      readonly action: "redrive";
      readonly moved: number;
      readonly failed: number;
      readonly objectGone: number;
      readonly undeleted: number;
      readonly complete: boolean;
    };

function askedOf(request: ActionRequest): Record<string, string | number> {
  if (request.targets.kind === "ids") return { ids: request.targets.ids.length };
  const asked: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(request.targets.filter)) {
    if (value !== undefined) asked[name] = value;
  }
  return asked;
}

/**
 * The items `request` would change, changing nothing: the dead rows it names or matches (for a
 * skip, those still holding their key), or the DLQ's messages in its latest listing.
 */
export async function previewAction(
  deps: ActionDeps,
  request: ActionRequest,
): Promise<ActionPreview | string> {
  const asked = askedOf(request);
  if (request.action === "redrive") {
    if (deps.desk === null) return "no DLQ configured (CONSUMER_DLQ_URL): nothing to redrive";
    const { letters } = await deps.desk.listing();
    const { targets } = request;
    const named = new Set(targets.kind === "ids" ? targets.ids : []);
    const matched = letters
      .filter((letter) =>
        targets.kind === "ids" ? named.has(letter.messageId) : matchesLetter(targets.filter, letter),
      )
      .map((letter) => letter.messageId);
    return {
      action: "redrive",
      ids: matched.slice(0, MAX_ACTION_ITEMS),
      capped: matched.length > MAX_ACTION_ITEMS,
      asked,
    };
  }
  const filter = request.targets.kind === "ids" ? { ids: request.targets.ids } : request.targets.filter;
  const ids = await deadRowIds(
    deps.db,
    { ...filter, holdingKey: request.action === "skip" },
    MAX_ACTION_ITEMS + 1,
  );
  const capped = ids.length > MAX_ACTION_ITEMS;
  if (request.action === "skip")
    return { action: "skip", ids: ids.slice(0, MAX_ACTION_ITEMS), capped, asked };
  // A requeue: each row's fate as requeueDeadRows will decide it, named rows taken even if skipped.
  const candidates = await requeueCandidates(
    deps.db,
    ids.slice(0, MAX_ACTION_ITEMS),
    deps.claimCheckSendWithinHours,
  );
  const options = {
    claimCheckSendWithinHours: deps.claimCheckSendWithinHours,
    includeSkipped: request.includeSkipped,
  };
  const rows = candidates.map((row) => ({
    row,
    fate: requeueFate(row, request.targets.kind === "ids", options),
  }));
  const taken = (fates: readonly RequeueFate[]) =>
    rows.filter(({ fate }) => fates.includes(fate)).map(({ row }) => row.id);
  return {
    action: "requeue",
    ids: taken(["requeued"]),
    capped,
    asked,
    requeue: {
      rows,
      outOfOrderIds: taken(["requeued", "overtaken"]),
      filter: request.targets.kind === "filter" ? request.targets.filter : null,
    },
  };
}

/**
 * Runs a confirmed action on exactly the ids its preview named, through the commands' own library
 * functions (requeueDeadRows, skipDeadRows, redrive), and logs one line: action, what was asked,
 * count, outcome, and who when an operator is authenticated.
 */
export async function runAction(
  deps: ActionDeps,
  action: ActionName,
  ids: readonly string[],
  asked: Readonly<Record<string, string | number>>,
  who: string | undefined,
  /** The out-of-order confirmation (ActionRequest.outOfOrder): a requeue takes overtaken rows too. */
  outOfOrder: boolean,
): Promise<ActionOutcome | string> {
  let outcome: ActionOutcome;
  if (action === "requeue") {
    const { requeued, refused, overtaken } = await requeueDeadRows(deps.db, ids, {
      claimCheckSendWithinHours: deps.claimCheckSendWithinHours,
      outOfOrder,
    });
    outcome = { action, requeued, refused, overtaken: overtaken.map((row) => row.id) };
  } else if (action === "skip") {
    outcome = { action, skipped: await skipDeadRows(deps.db, ids) };
  } else {
    if (deps.desk === null) return "no DLQ configured (CONSUMER_DLQ_URL): nothing to redrive";
    const summary = await deps.desk.redrive(ids);
    outcome = {
      action,
      moved: summary.moved,
      failed: summary.failed,
      objectGone: summary.objectGone,
      undeleted: summary.undeleted,
      complete: summary.complete,
    };
  }
  const { action: _, ...counts } = outcome;
  const logged =
    "refused" in counts
      ? { ...counts, refused: counts.refused.length, overtaken: counts.overtaken.length }
      : counts;
  deps.log.info(
    {
      action,
      filter: asked,
      count: ids.length,
      outcome: logged,
      ...(who === undefined ? {} : { who }),
      ...(outOfOrder ? { outOfOrder } : {}),
    },
    "console action",
  );
  return outcome;
}
