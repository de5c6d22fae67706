import { forTerminal } from "@outbox/shared";

/** Markup the console wrote itself: the only thing `html` inserts unescaped. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

type Insert = Html | string | number | boolean | null | undefined | readonly Insert[];

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made inert in HTML, in an element's content and in a quoted attribute alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

function insert(value: Insert): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(insert).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/**
 * The one way a page is written: every value put into the template is escaped unless it is `Html`
 * this module made, so a text from a message can never become markup, whatever view shows it.
 */
export function html(strings: TemplateStringsArray, ...values: readonly Insert[]): Html {
  let markup = strings[0] ?? "";
  values.forEach((value, index) => {
    markup += insert(value) + (strings[index + 1] ?? "");
  });
  return new Html(markup);
}

/** The most characters of an id, a type, a key or a topic a cell shows. */
export const NAME_SHOWN = 120;
/** The most characters of a reason a cell shows; the row's details show up to REASON_DETAIL. */
export const REASON_SHOWN = 160;
export const REASON_DETAIL = 1_000;
/** The most characters of a payload's preview. */
export const PAYLOAD_SHOWN = 1_000;

/**
 * A text that came from a message or a row (an event type, an id, a reason, a payload): hostile, so
 * controls and invisible characters are made visible and the length capped (forTerminal, as the
 * commands show it), before `html` escapes it for the page.
 */
export function shown(text: string | null, maxChars: number = NAME_SHOWN): string {
  return text === null ? "—" : forTerminal(text, maxChars);
}

/** A JSON data block for the page's script: `<` escaped, so no text in it can close the element. */
export function jsonBlock(id: string, data: unknown): Html {
  const json = JSON.stringify(data).replaceAll("<", "\\u003c");
  return new Html(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}

/** A duration for people: 42 s, 5 min, 3 h, 2 d. */
export function age(seconds: number | null): string {
  if (seconds === null) return "—";
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3_600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}
