import { type Html, html } from "../html.js";

/** What a page needs to offer actions: the CSRF token its forms carry, and whether to offer them at all. */
export interface ActionContext {
  readonly csrf: string;
  readonly readOnly: boolean;
}

export type ActionName = "requeue" | "skip" | "redrive";

export const ACTION_LABELS: Readonly<Record<ActionName, string>> = {
  requeue: "Requeue",
  skip: "Skip",
  redrive: "Redrive",
};

/** The hidden field every action form carries (checked against the cookie: see guard.ts). */
export function csrfField(context: ActionContext): Html {
  return html`<input type="hidden" name="csrf" value="${context.csrf}">`;
}

/**
 * A form asking for the preview of `action` on everything `fields` select (a group, a filter): a
 * POST to /actions/preview, which changes nothing and answers "this will …" with a confirm button.
 */
export function previewForm(
  context: ActionContext,
  action: ActionName,
  label: string,
  fields: Readonly<Record<string, string | number | undefined>>,
  /** What the button does, said in full to a screen reader when `label` alone leaves out on what. */
  accessibleName?: string,
): Html {
  if (context.readOnly) return html``;
  return html`<form method="post" action="/actions/preview" class="inline">
${csrfField(context)}<input type="hidden" name="action" value="${action}">
${Object.entries(fields).map(([name, value]) =>
  value === undefined ? "" : html`<input type="hidden" name="${name}" value="${value}">`,
)}<button type="submit"${accessibleName === undefined ? "" : html` aria-label="${accessibleName}"`}>${label}</button></form>`;
}

/**
 * A table whose rows can be ticked, and the buttons that preview an action on the ticked ones: a
 * POST to /actions/preview with `scope=selected` (nothing ticked is refused, never "everything").
 * Read-only: the table alone.
 */
export function selectionForm(
  context: ActionContext,
  id: string,
  table: Html,
  actions: readonly { readonly action: ActionName; readonly label: string }[],
): Html {
  if (context.readOnly) return table;
  return html`<form method="post" action="/actions/preview" id="${id}">
${csrfField(context)}<input type="hidden" name="scope" value="selected">
${table}
<p class="actions">${actions.map(
    ({ action, label }) => html`<button type="submit" name="action" value="${action}">${label}</button> `,
  )}</p>
</form>`;
}
