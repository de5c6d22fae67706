import type { OutboxTables as Database } from "@outbox/client";
import { PAYLOAD_SIZE_ATTRIBUTES } from "@outbox/client/internal";
import { EXIT_CONFIG, reportConfigErrors, resolveConfig } from "@outbox/shared";
import { type Kysely, sql } from "kysely";
import { requeueDeadSettings } from "../settings.js";
import { deadRowId, onlyRows, runDeadRowsCommand } from "./dead-rows-command.js";

/** The most refused event ids one line lists; the count says how many there were. */
const LISTED_IDS = 20;

/** What a requeue did: the rows given a fresh set of attempts, the claim-checked ones left dead. */
export interface RequeueOutcome {
  readonly requeued: number;
  /** Claim-checked rows older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS, in seq order: still dead. */
  readonly refused: readonly string[];
}

/**
 * Dead rows (all of them, or those of `ids`) get a fresh set of attempts and are available at once.
 * `last_error` stays as a record of why they died. A skipped row is requeued too: it is again its
 * key's head, and goes out before the events waiting behind it. A claim-checked row older than
 * `claimCheckSendWithinHours` stays dead: its object may expire before a message pointing at it is
 * read (claim-check-age.ts), so only the application can send it again, by enqueueing it anew.
 * The one home of a requeue: `relay requeue-dead` and the operator console call it.
 */
export async function requeueDeadRows(
  db: Kysely<Database>,
  ids: readonly string[] | undefined,
  claimCheckSendWithinHours: number,
): Promise<RequeueOutcome> {
  const which = onlyRows(ids);
  // Claim-checked (the extended clients' size marker among its headers) and older than the window.
  const aged = sql`(headers ?| ${[...PAYLOAD_SIZE_ATTRIBUTES]}::text[]
                    AND created_at < now() - ${claimCheckSendWithinHours} * interval '1 hour')`;
  const { rows: refused } = await sql<{ id: string }>`
    SELECT id FROM outbox WHERE dead_at IS NOT NULL AND published_at IS NULL ${which} AND ${aged}
    ORDER BY seq
  `.execute(db);
  const result = await sql`
    UPDATE outbox
    SET dead_at = NULL, skipped_at = NULL, attempts = 0, available_at = now(), locked_until = NULL,
        locked_by = NULL
    WHERE dead_at IS NOT NULL AND published_at IS NULL ${which} AND NOT ${aged}
  `.execute(db);
  return { requeued: Number(result.numAffectedRows ?? 0), refused: refused.map((row) => row.id) };
}

/**
 * `relay requeue-dead [--id ID]`: requeueDeadRows on every dead row, or one; the claim-checked rows
 * it left dead are named on stderr. Exit 1 when `--id` names no dead row.
 */
export function runRequeueDead(id: string | boolean | undefined, usage: string): Promise<number> {
  // A bad --id is a usage error before any configuration is read, as for every dead-rows command.
  deadRowId(id, usage);
  const config = reportConfigErrors("relay requeue-dead", () =>
    resolveConfig(requeueDeadSettings, () => [], process.env),
  );
  if (config === undefined) return Promise.resolve(EXIT_CONFIG);
  const hours = config.claimCheckSendWithinHours;
  return runDeadRowsCommand("requeue-dead", "requeued", id, usage, async (db, only) => {
    const { requeued, refused } = await requeueDeadRows(db, only, hours);
    if (refused.length > 0) {
      const listed = refused.slice(0, LISTED_IDS);
      process.stderr.write(
        `relay requeue-dead: ${refused.length} claim-checked events left dead: older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (${hours} h), their objects may expire before a message is read; enqueue them again: ${listed.join(" ")}${refused.length > LISTED_IDS ? " …" : ""}\n`,
      );
    }
    return requeued;
  });
}
