import type { OutboxTables as Database } from "@outbox/client";
import { PAYLOAD_SIZE_ATTRIBUTES } from "@outbox/client/internal";
import { EXIT_CONFIG, reportConfigErrors, resolveConfig } from "@outbox/shared";
import { type Kysely, type RawBuilder, sql } from "kysely";
import { requeueDeadSettings } from "../settings.js";
import { deadRowId, onlyRows, runDeadRowsCommand } from "./dead-rows-command.js";

/** The most refused event ids one line lists; the count says how many there were. */
const LISTED_IDS = 20;
/** The most later events a refusal names per row. */
export const LATER_NAMED = 20;

export interface RequeueOptions {
  /** RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS: claim-checked rows older than it stay dead. */
  readonly claimCheckSendWithinHours: number;
  /**
   * Requeue rows whose key has already sent later events too: they go out after them, out of their
   * key's order. Off, such rows stay dead (and are named).
   */
  readonly outOfOrder?: boolean;
  /** Every dead row (no ids named) includes the skipped ones; named rows are always taken. */
  readonly includeSkipped?: boolean;
}

/** What a requeue will do with one dead row (requeueFate): the one place a row's fate is decided. */
export type RequeueFate =
  /** Sent again, before its key's events still waiting. */
  | "requeued"
  /** Sent again after its key's later events (they went out while it was skipped): outOfOrder. */
  | "requeued-out-of-order"
  /** Stays dead: its key already sent later events, and outOfOrder was not given. */
  | "overtaken"
  /** Stays dead: claim-checked and older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS. */
  | "claim-check-aged"
  /** Left out: skipped, and not named nor included (includeSkipped). */
  | "skipped";

/** A dead row as a requeue sees it: enough to say what will happen to it and to its key. */
export interface RequeueCandidate {
  readonly id: string;
  readonly orderingKey: string | null;
  readonly skipped: boolean;
  readonly claimCheckAged: boolean;
  /** Its key's events still waiting (pending, later in seq): they go out after it if requeued. */
  readonly waiting: number;
  /**
   * Its key's later events already published (or being published) since it was skipped, the first
   * LATER_NAMED in seq order: requeued, it would go out after them.
   */
  readonly laterSent: readonly string[];
}

/** What a requeue did: the rows given a fresh set of attempts, and every row it left dead or out. */
export interface RequeueOutcome {
  readonly requeued: number;
  /** Claim-checked rows older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS, in seq order: still dead. */
  readonly refused: readonly string[];
  /** Rows whose key already sent later events, with those events named: still dead. */
  readonly overtaken: readonly RequeueCandidate[];
  /** Skipped rows left out of a requeue of every dead row (includeSkipped off). */
  readonly skippedLeftOut: number;
}

// A claim-checked row (the extended clients' size marker among its headers) older than the window.
function claimCheckAged(row: string, hours: number): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${row}.${name}`);
  return sql<boolean>`(${column("headers")} ?| ${[...PAYLOAD_SIZE_ATTRIBUTES]}::text[]
    AND ${column("created_at")} < now() - ${hours} * interval '1 hour')`;
}

/**
 * The later events of dead row `row`'s key that went out (published) or are going out (leased by a
 * relay) while it did not hold its key. Only a skipped row can have such events: a dead row holding
 * its key blocks every later event of it (outbox-store.ts), so they were all published after the
 * skip, and `published_at >= skipped_at` keeps the probe on `outbox_published_at` rather than the
 * key's whole published history. The leased ones are on `outbox_pending_by_key`. Published events
 * retention has deleted are not seen: after RELAY_RETENTION_MS a skipped row's key looks untouched.
 */
function laterSent(row: string): RawBuilder<unknown> {
  const column = (name: string) => sql.ref(`${row}.${name}`);
  return sql`FROM outbox l
    WHERE ${column("skipped_at")} IS NOT NULL AND l.ordering_key = ${column("ordering_key")}
      AND l.seq > ${column("seq")}
      AND (l.published_at >= ${column("skipped_at")}
           OR (l.published_at IS NULL AND l.dead_at IS NULL AND l.locked_until >= now()))`;
}

/**
 * The dead rows a requeue of `ids` (or of every dead row) would look at, in seq order, with what
 * decides their fate. Reads only dead rows (`outbox_dead`) and, per keyed row, its key's range.
 */
export async function requeueCandidates(
  db: Kysely<Database>,
  ids: readonly string[] | undefined,
  claimCheckSendWithinHours: number,
): Promise<RequeueCandidate[]> {
  const { rows } = await sql<{
    id: string;
    ordering_key: string | null;
    skipped: boolean;
    aged: boolean;
    waiting: string;
    later: string[];
  }>`
    SELECT o.id, o.ordering_key, o.skipped_at IS NOT NULL AS skipped,
           ${claimCheckAged("o", claimCheckSendWithinHours)} AS aged,
           (SELECT count(*) FROM outbox w
            WHERE w.ordering_key = o.ordering_key AND w.published_at IS NULL AND w.dead_at IS NULL
              AND w.seq > o.seq) AS waiting,
           ARRAY(SELECT l.id ${laterSent("o")} ORDER BY l.seq LIMIT ${LATER_NAMED}) AS later
    FROM outbox o
    WHERE o.dead_at IS NOT NULL AND o.published_at IS NULL ${onlyRows(ids, "o")}
    ORDER BY o.seq
  `.execute(db);
  return rows.map((row) => ({
    id: row.id,
    orderingKey: row.ordering_key,
    skipped: row.skipped,
    claimCheckAged: row.aged,
    waiting: Number(row.waiting),
    laterSent: row.later,
  }));
}

/** What a requeue with `options` does with `row`; `named`: the row was named by id. */
export function requeueFate(row: RequeueCandidate, named: boolean, options: RequeueOptions): RequeueFate {
  if (row.skipped && !named && options.includeSkipped !== true) return "skipped";
  if (row.claimCheckAged) return "claim-check-aged";
  if (row.laterSent.length > 0) return options.outOfOrder === true ? "requeued-out-of-order" : "overtaken";
  return "requeued";
}

/**
 * Dead rows (those of `ids`, or every one) get a fresh set of attempts and are available at once.
 * `last_error` stays as a record of why they died. A requeued row is again its key's head, and goes
 * out before the events waiting behind it; so a row whose key has already sent later events (it was
 * skipped, and they went without it) would go out after them: it stays dead unless `outOfOrder`.
 * A requeue of every dead row leaves the skipped ones out unless `includeSkipped`: someone decided
 * their keys go on without them. A claim-checked row older than `claimCheckSendWithinHours` stays
 * dead: its object may expire before a message pointing at it is read (claim-check-age.ts), so only
 * the application can send it again, by enqueueing it anew. The one home of a requeue: `relay
 * requeue-dead` and the operator console call it; the UPDATE states every rule again, so a row that
 * changed since it was read (a later event published meanwhile) is still judged right.
 */
export async function requeueDeadRows(
  db: Kysely<Database>,
  ids: readonly string[] | undefined,
  options: RequeueOptions,
): Promise<RequeueOutcome> {
  const named = ids !== undefined;
  const candidates = await requeueCandidates(db, ids, options.claimCheckSendWithinHours);
  const fates = candidates.map((row) => ({ row, fate: requeueFate(row, named, options) }));
  const result = await sql`
    UPDATE outbox o
    SET dead_at = NULL, skipped_at = NULL, attempts = 0, available_at = now(), locked_until = NULL,
        locked_by = NULL
    WHERE o.dead_at IS NOT NULL AND o.published_at IS NULL ${onlyRows(ids, "o")}
      AND NOT ${claimCheckAged("o", options.claimCheckSendWithinHours)}
      ${named || options.includeSkipped === true ? sql`` : sql`AND o.skipped_at IS NULL`}
      ${options.outOfOrder === true ? sql`` : sql`AND NOT EXISTS (SELECT 1 ${laterSent("o")})`}
  `.execute(db);
  return {
    requeued: Number(result.numAffectedRows ?? 0),
    refused: fates.filter(({ fate }) => fate === "claim-check-aged").map(({ row }) => row.id),
    overtaken: fates.filter(({ fate }) => fate === "overtaken").map(({ row }) => row),
    skippedLeftOut: fates.filter(({ fate }) => fate === "skipped").length,
  };
}

function listed(ids: readonly string[], more = ids.length > LISTED_IDS): string {
  return `${ids.slice(0, LISTED_IDS).join(" ")}${more ? " …" : ""}`;
}

/**
 * `relay requeue-dead [--id ID] [--include-skipped] [--out-of-order]`: requeueDeadRows on every dead
 * row, or one; the rows it left dead or out are named on stderr. Exit 1 when `--id` names no row it
 * requeued.
 */
export function runRequeueDead(
  values: { readonly id?: string | boolean; readonly includeSkipped: boolean; readonly outOfOrder: boolean },
  usage: string,
): Promise<number> {
  // A bad --id is a usage error before any configuration is read, as for every dead-rows command.
  deadRowId(values.id, usage);
  const config = reportConfigErrors("relay requeue-dead", () =>
    resolveConfig(requeueDeadSettings, () => [], process.env),
  );
  if (config === undefined) return Promise.resolve(EXIT_CONFIG);
  const hours = config.claimCheckSendWithinHours;
  return runDeadRowsCommand("requeue-dead", "requeued", values.id, usage, async (db, only) => {
    const outcome = await requeueDeadRows(db, only, {
      claimCheckSendWithinHours: hours,
      includeSkipped: values.includeSkipped,
      outOfOrder: values.outOfOrder,
    });
    const say = (line: string) => process.stderr.write(`relay requeue-dead: ${line}\n`);
    if (outcome.refused.length > 0) {
      say(
        `${outcome.refused.length} claim-checked events left dead: older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (${hours} h), their objects may expire before a message is read; enqueue them again: ${listed(outcome.refused)}`,
      );
    }
    for (const row of outcome.overtaken.slice(0, LISTED_IDS)) {
      // The key is a producer's text: it is named by the row's id, never printed.
      say(
        `${row.id} left dead: its key already sent later events while it was skipped (${listed(row.laterSent, row.laterSent.length >= LATER_NAMED)}); requeued it would go out after them, out of its key's order: add --out-of-order to accept that`,
      );
    }
    if (outcome.overtaken.length > LISTED_IDS) {
      say(`… and ${outcome.overtaken.length - LISTED_IDS} more rows left dead for the same reason`);
    }
    if (outcome.skippedLeftOut > 0) {
      say(
        `${outcome.skippedLeftOut} skipped dead rows left out (skip-dead let their keys go on without them): name one with --id, or add --include-skipped`,
      );
    }
    return outcome.requeued;
  });
}
