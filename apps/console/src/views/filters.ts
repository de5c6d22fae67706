import { type Html, html, shown } from "../html.js";

/** The age choices of a filter, in seconds ("" is any age). */
export const AGE_CHOICES: readonly { readonly value: string; readonly label: string }[] = [
  { value: "", label: "any age" },
  { value: "300", label: "older than 5 min" },
  { value: "3600", label: "older than 1 h" },
  { value: "86400", label: "older than 1 day" },
];

export interface FilterFields {
  readonly topic?: string;
  readonly eventType?: string;
  readonly kind?: string;
  readonly olderThanSeconds?: number;
}

/** A dead-rows filter as the fields of its form (the names filterOf reads back). */
export function deadRowFields(filter: FilterFields): Record<string, string | number | undefined> {
  return { topic: filter.topic, type: filter.eventType, kind: filter.kind, older: filter.olderThanSeconds };
}

/** The filter of a list (a GET form: the URL says what is shown, and can be shared). */
export function filterForm(
  path: string,
  filter: FilterFields,
  kinds: readonly string[],
  options: { readonly topic: boolean },
): Html {
  const older = filter.olderThanSeconds === undefined ? "" : String(filter.olderThanSeconds);
  return html`<form method="get" action="${path}" class="filters" role="search" aria-label="Filter">
${options.topic ? html`<label>Topic <input name="topic" value="${filter.topic ?? ""}" maxlength="200"></label>` : ""}
<label>Event type <input name="type" value="${filter.eventType ?? ""}" maxlength="200"></label>
<label>Reason kind <select name="kind"><option value="">any</option>${kinds.map(
    (kind) => html`<option value="${kind}"${kind === filter.kind ? " selected" : ""}>${shown(kind)}</option>`,
  )}</select></label>
<label>Age <select name="older">${AGE_CHOICES.map(
    (choice) =>
      html`<option value="${choice.value}"${choice.value === older ? " selected" : ""}>${choice.label}</option>`,
  )}</select></label>
<button type="submit">Filter</button> <a href="${path}">Clear</a>
</form>`;
}
