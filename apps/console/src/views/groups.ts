import { type Html, html, shown } from "../html.js";
import type { ReasonGroup } from "../reads/dead-rows.js";

/**
 * Counts by reason kind (ServicePulse's failure groups), largest first: the count as a number and
 * as a meter, so neither colour nor length alone carries it; `actions` adds a cell per group.
 */
export function groupsTable(
  id: string,
  caption: string,
  groups: readonly ReasonGroup[],
  actions?: (group: ReasonGroup) => Html,
): Html {
  if (groups.length === 0) return html``;
  const largest = Math.max(...groups.map((group) => group.count));
  return html`<table id="${id}" class="groups">
<caption>${caption}</caption>
<thead><tr><th scope="col">Reason kind</th><th scope="col" class="num">Count</th><th scope="col">Share</th>${actions === undefined ? "" : html`<th scope="col">Actions</th>`}</tr></thead>
<tbody>${groups.map(
    (
      group,
    ) => html`<tr data-kind="${shown(group.kind)}"><th scope="row">${shown(group.kind)}</th><td class="num" data-count="group">${group.count}</td>
<td><meter min="0" max="${largest}" value="${group.count}" aria-label="${shown(group.kind)}: ${group.count}">${group.count}</meter></td>${actions === undefined ? "" : html`<td>${actions(group)}</td>`}</tr>`,
  )}</tbody></table>`;
}
