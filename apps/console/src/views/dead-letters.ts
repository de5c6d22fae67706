import { age, type Html, html, PAYLOAD_SHOWN, REASON_DETAIL, REASON_SHOWN, shown } from "../html.js";
import type { DeadLetterFilter, DeadLetterListing, ListedLetter } from "../reads/dead-letters.js";
import type { ReasonGroup } from "../reads/dead-rows.js";
import type { QueueDepth } from "../reads/queue-depths.js";
import { filterForm } from "./filters.js";
import { type ActionContext, csrfField, previewForm, selectionForm } from "./forms.js";
import { groupsTable } from "./groups.js";

/** The most dead letters a page lists (`?page=N` the next ones); the groups count them all. */
export const LETTERS_LISTED = 200;

/** The page of a listing a query asks for (`page`, from 1); 1 for anything else. */
export function letterPage(query: URLSearchParams): number {
  const page = Number(query.get("page") ?? "1");
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

function letterDetails(letter: ListedLetter, index: number): Html {
  return html`<details id="letter-${index}"><summary>Details<span class="visually-hidden"> of message ${shown(letter.messageId)}</span></summary>
<dl>
<dt>Sent to the DLQ</dt><dd>${letter.sentAt ?? "—"}</dd>
<dt>Reason</dt><dd>${letter.reason === null ? "none: the queue's redrive policy moved it (its handler kept failing)" : shown(letter.reason, REASON_DETAIL)}</dd>
<dt>Attributes</dt><dd><ul>${Object.entries(letter.attributes).map(
    ([name, value]) => html`<li><code>${shown(name)}</code>: ${shown(value)}</li>`,
  )}</ul></dd>
<dt>Body (${letter.bodyChars} characters)</dt><dd><pre>${shown(letter.bodyHead, PAYLOAD_SHOWN)}</pre></dd>
</dl></details>`;
}

function filterFields(filter: DeadLetterFilter): Record<string, string | number | undefined> {
  return { type: filter.eventType, kind: filter.kind, older: filter.olderThanSeconds };
}

export interface DeadLettersData {
  readonly listing: DeadLetterListing;
  /** The listing's letters the filter matches. */
  readonly matching: readonly ListedLetter[];
  /** All the listing's letters by kind (the filter's kind aside), for the chart and the group actions. */
  readonly groups: readonly ReasonGroup[];
  readonly dlq: QueueDepth | { readonly error: string };
  /** Which LETTERS_LISTED of `matching` are shown: letterPage. */
  readonly page: number;
}

/** The links to the pages before and after `page` of `matching`, keeping the filter. */
function pageLinks(filter: DeadLetterFilter, page: number, pages: number): Html {
  if (pages <= 1) return html``;
  const link = (to: number, label: string) => {
    const query = new URLSearchParams({ page: String(to) });
    for (const [name, value] of Object.entries(filterFields(filter)))
      if (value !== undefined) query.set(name, String(value));
    return html`<a href="/dead-letters?${query.toString()}">${label}</a>`;
  };
  return html`<nav aria-label="Pages of the listing"><p>Page ${page} of ${pages}. ${
    page > 1 ? link(page - 1, "Previous page") : ""
  } ${page < pages ? link(page + 1, "Next page") : ""}</p></nav>`;
}

/** The DLQ: its depth live, a listing by reason kind, each letter expandable; redrive one, some, a group, a filter. */
export function deadLettersView(
  data: DeadLettersData,
  filter: DeadLetterFilter,
  context: ActionContext,
): Html {
  const { listing, matching } = data;
  const pages = Math.max(1, Math.ceil(matching.length / LETTERS_LISTED));
  const page = Math.min(data.page, pages);
  const first = (page - 1) * LETTERS_LISTED;
  const shownLetters = matching.slice(first, first + LETTERS_LISTED);
  const depth =
    "error" in data.dlq
      ? html`<p class="alert" role="alert">SQS did not answer: ${shown(data.dlq.error, 300)}</p>`
      : html`<p>SQS counts <span data-count="dlq-depth">${data.dlq.visible}</span> messages waiting in the DLQ and ${data.dlq.inFlight} held (approximate, live).</p>`;
  const groupActions = (group: ReasonGroup) =>
    previewForm(
      context,
      "redrive",
      "Redrive group",
      { ...filterFields(filter), kind: group.kind },
      `Redrive the ${group.count} dead letters of kind ${shown(group.kind)}`,
    );
  return html`<div id="dlq-depth" data-live>${depth}</div>
${filterForm(
  "/dead-letters",
  filter,
  data.groups.map((group) => group.kind),
  { topic: false },
)}
<div id="dead-letters">
<p>Listed at ${listing.readAt}: <span data-count="dead-letters">${listing.letters.length}</span> messages${
    listing.complete
      ? ""
      : html` <strong class="alert">(partial: the walk did not cover the DLQ; re-read it)</strong>`
  }${
    listing.received > listing.letters.length
      ? html` <strong class="alert">(the first ${listing.letters.length} of the <span data-count="received">${listing.received}</span> received are kept: the groups and the filter count those)</strong>`
      : ""
  }, <span data-count="matching">${matching.length}</span> match the filter.
</p>
<form method="post" action="/dead-letters/read" class="filters" aria-label="Re-read the DLQ">${csrfField(context)}<button type="submit">Re-read the DLQ</button></form>
<p>Reading the DLQ receives every message once and hands it back at once: SQS counts each read as a receive, so a
letter the queue's redrive policy moved (no reason) shows its receives since, the console's reads included, as its
attempts. One the consumer moved carries its own count.</p>
<p>A <strong>redrive</strong> sends a message back to the consumer's queue, then deletes it from the DLQ (a stop in between leaves a copy in both, which the inbox makes a duplicate).</p>
${groupsTable("dead-letter-groups", "Dead letters by reason kind (the DLQ by reason)", data.groups, context.readOnly ? undefined : groupActions)}
${
  shownLetters.length === 0
    ? ""
    : html`${previewForm(context, "redrive", `Redrive all ${matching.length} matching`, filterFields(filter))}
${selectionForm(
  context,
  "dead-letters-selection",
  html`<table id="dead-letters-table">
<caption>Dead letters${matching.length > shownLetters.length ? `, ${first + 1} to ${first + shownLetters.length} of ${matching.length}` : ""}</caption>
<thead><tr>${context.readOnly ? "" : html`<th scope="col">Select</th>`}<th scope="col">Event</th><th scope="col">Type</th><th scope="col">Reason kind</th><th scope="col">Reason</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">In the DLQ for</th><th scope="col">More</th></tr></thead>
<tbody>
${shownLetters.map(
  (letter, index) => html`<tr data-message="${shown(letter.messageId)}">
${context.readOnly ? "" : html`<td><input type="checkbox" name="id" value="${letter.messageId}" aria-label="Select message ${shown(letter.messageId)}"></td>`}
<th scope="row"><code>${shown(letter.eventId)}</code></th><td class="type">${shown(letter.eventType)}</td><td>${shown(letter.kind)}</td>
<td>${letter.reason === null ? "redrive policy" : shown(letter.reason, REASON_SHOWN)}</td><td class="num">${letter.attempts}</td>
<td class="num">${age(letter.ageSeconds)}</td><td>${letterDetails(letter, index)}</td></tr>`,
)}
</tbody></table>`,
  [{ action: "redrive", label: "Redrive selected" }],
)}
${pageLinks(filter, page, pages)}`
}
</div>`;
}
