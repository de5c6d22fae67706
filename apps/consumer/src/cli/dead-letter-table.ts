import { renderTable } from "@outbox/shared";
import type { DeadLetter } from "./dead-letters.js";

/** The most characters of a reason a table row shows; `--json` carries it whole. */
const REASON_SHOWN = 80;

/**
 * Dead letters as a table for people: one row each, columns padded to their widest cell, numbers
 * right-aligned. A message the redrive policy moved has no reason of the consumer's: it says so.
 */
export function renderDeadLetters(letters: readonly DeadLetter[]): string {
  const rows = [
    ["MESSAGE ID", "EVENT ID", "EVENT TYPE", "ATTEMPTS", "AGE", "REASON"],
    ...letters.map((letter) => [
      letter.messageId,
      letter.eventId ?? "—",
      letter.eventType ?? "—",
      String(letter.attempts),
      letter.ageSeconds === null ? "—" : `${letter.ageSeconds} s`,
      (letter.reason ?? "(redrive policy: the handler kept failing)").slice(0, REASON_SHOWN),
    ]),
  ];
  return renderTable(rows, new Set([3, 4]));
}
