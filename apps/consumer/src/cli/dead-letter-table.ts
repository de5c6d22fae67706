import { renderTable } from "@outbox/shared";
import type { DeadLetter } from "./dead-letters.js";

/** The most characters of an id or an event type a table row shows; `--json` shows up to 1 000. */
const TEXT_SHOWN = 60;
/** The most characters of a reason a table row shows. */
const REASON_SHOWN = 80;

/** `text` (already shown: escaped) cut to `maxChars`, not between the halves of a surrogate pair. */
function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const lastCode = text.charCodeAt(maxChars - 1);
  return `${text.slice(0, lastCode >= 0xd800 && lastCode <= 0xdbff ? maxChars - 1 : maxChars)}…`;
}

/**
 * Dead letters as a table for people: one row each, columns padded to their widest cell, numbers
 * right-aligned. A message the redrive policy moved has no reason of the consumer's: it says so.
 * `letters` are as `--json` shows them (keptDeadLetter: escaped and capped), each text cut shorter here.
 */
export function renderDeadLetters(letters: readonly DeadLetter[]): string {
  const text = (value: string | null, max = TEXT_SHOWN) => (value === null ? "—" : cut(value, max));
  const rows = [
    ["MESSAGE ID", "EVENT ID", "EVENT TYPE", "ATTEMPTS", "AGE", "REASON"],
    ...letters.map((letter) => [
      text(letter.messageId),
      text(letter.eventId),
      text(letter.eventType),
      String(letter.attempts),
      letter.ageSeconds === null ? "—" : `${letter.ageSeconds} s`,
      letter.reason === null
        ? "(redrive policy: the handler kept failing)"
        : text(letter.reason, REASON_SHOWN),
    ]),
  ];
  return renderTable(rows, new Set([3, 4]));
}
