import { age, type Html, html, PAYLOAD_SHOWN, REASON_DETAIL, REASON_SHOWN, shown } from "../html.js";
import { DEAD_ROWS_LISTED, type DeadRow, type DeadRowFilter, type ReasonGroup } from "../reads/dead-rows.js";
import { deadRowFields, filterForm } from "./filters.js";
import { type ActionContext, previewForm, selectionForm } from "./forms.js";
import { groupsTable } from "./groups.js";

function rowDetails(row: DeadRow): Html {
  return html`<details id="details-${row.id}"><summary>Details<span class="visually-hidden"> of event ${row.id}</span></summary>
<dl>
<dt>Ordering key</dt><dd>${shown(row.orderingKey)}</dd>
<dt>Dead at</dt><dd>${row.deadAt}</dd>
<dt>Holds its key</dt><dd>${row.holdsKey ? "yes: its key's later events wait" : "no: skipped"}</dd>
<dt>Last error</dt><dd>${shown(row.lastError, REASON_DETAIL)}</dd>
<dt>Headers</dt><dd>${
    Object.keys(row.headers).length === 0
      ? "none"
      : html`<ul>${Object.entries(row.headers).map(([name, value]) => html`<li><code>${shown(name)}</code>: ${shown(String(value))}</li>`)}</ul>`
  }</dd>
<dt>Payload (${row.payloadChars} characters)</dt><dd><pre>${shown(row.payloadHead, PAYLOAD_SHOWN)}</pre></dd>
</dl></details>`;
}

/** Dead rows: grouped by reason kind, filterable, each expandable; requeue or skip one, a selection, a group. */
export function deadRowsView(
  rows: readonly DeadRow[],
  groups: readonly ReasonGroup[],
  filter: DeadRowFilter,
  context: ActionContext,
): Html {
  const total = groups.reduce((sum, group) => sum + group.count, 0);
  const groupActions = (group: ReasonGroup) =>
    html`${previewForm(context, "requeue", "Requeue group", { ...deadRowFields(filter), kind: group.kind }, `Requeue the dead rows of kind ${shown(group.kind)} (skipped ones left out unless asked)`)} ${previewForm(context, "skip", "Skip group", { ...deadRowFields(filter), kind: group.kind }, `Skip the ${group.count} dead rows of kind ${shown(group.kind)}`)}`;
  return html`${filterForm(
    "/dead-rows",
    filter,
    groups.map((group) => group.kind),
    { topic: true },
  )}
<div id="dead-rows" data-live>
<p><span data-count="dead-rows">${total}</span> dead rows match${rows.length < total ? ` (the ${DEAD_ROWS_LISTED} newest are listed)` : ""}.
A dead row was never published: <strong>requeue</strong> gives it a fresh set of attempts (sent again, before its key's waiting events;
a skipped row whose key has since sent later events stays dead unless you confirm it out of order, and a group leaves its skipped rows out unless asked);
<strong>skip</strong> leaves it dead and lets its key's later events go without it.</p>
${groupsTable("dead-row-groups", "Dead rows by reason kind", groups, context.readOnly ? undefined : groupActions)}
${
  rows.length === 0
    ? ""
    : selectionForm(
        context,
        "dead-rows-selection",
        html`<table id="dead-rows-table">
<caption>Dead rows, newest death first</caption>
<thead><tr>${context.readOnly ? "" : html`<th scope="col">Select</th>`}<th scope="col">Event</th><th scope="col">Topic</th><th scope="col">Type</th><th scope="col">Reason kind</th><th scope="col">Reason</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Dead for</th><th scope="col">More</th></tr></thead>
<tbody>
${rows.map(
  (row) => html`<tr data-id="${row.id}">
${context.readOnly ? "" : html`<td><input type="checkbox" name="id" value="${row.id}" id="pick-${row.id}" aria-label="Select event ${row.id}"></td>`}
<th scope="row"><code>${row.id}</code></th><td>${shown(row.topic)}</td><td class="type">${shown(row.eventType)}</td>
<td>${shown(row.kind)}</td><td>${shown(row.lastError, REASON_SHOWN)}</td><td class="num">${row.attempts}</td>
<td class="num">${age(row.ageSeconds)}</td><td>${rowDetails(row)}</td></tr>`,
)}
</tbody></table>`,
        [
          { action: "requeue", label: "Requeue selected" },
          { action: "skip", label: "Skip selected" },
        ],
      )
}
</div>`;
}
