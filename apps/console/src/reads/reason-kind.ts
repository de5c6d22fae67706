import { type RawBuilder, sql } from "kysely";

/**
 * A dead row's reason kind, for grouping (ServicePulse's "failure groups"): the leading name of its
 * `last_error` (an SNS error code such as `InvalidParameter`, or the relay's own word for an
 * unsendable row), read past the relay's `after N attempts: ` prefix; `other` when the text starts
 * with no such name, `none` when there is no text. Stated once, in SQL, so that the groups and the
 * filter by kind agree. `row` is the alias of the outbox row.
 */
export function deadRowKind(row: string): RawBuilder<string> {
  const error = sql.ref(`${row}.last_error`);
  return sql<string>`COALESCE(
    substring(regexp_replace(${error}, '^after [0-9]+ attempts: ', '') FROM '^([A-Za-z][A-Za-z0-9_.]{0,39})(?::|$)'),
    CASE WHEN ${error} IS NULL THEN 'none' ELSE 'other' END)`;
}

/** A dead letter's reason kind: the consumer's poison kind (`body_not_json`, …), or how else it got there. */
export function deadLetterKind(reason: string | null): string {
  if (reason === null) return "redrive_policy";
  return /^([a-z_]{1,40}):/.exec(reason)?.[1] ?? "other";
}
