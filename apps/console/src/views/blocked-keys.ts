import type { BlockedKey } from "@outbox/relay/operations";
import { age, type Html, html, REASON_SHOWN, shown } from "../html.js";
import { type ActionContext, previewForm } from "./forms.js";

/** The most blocked keys the page lists (readBlockedKeys); it counts them all. */
export const BLOCKED_KEYS_LISTED = 200;

/** Each key held by a dead head: why, how long, how much waits behind it; requeue or skip the head. */
export function blockedKeysView(keys: readonly BlockedKey[], total: number, context: ActionContext): Html {
  if (keys.length === 0) {
    return html`<div id="blocked" data-live><p data-count="blocked-keys">No key is blocked: every ordering key's events can go out.</p></div>`;
  }
  return html`<div id="blocked" data-live>
<p>A dead row holds its ordering key: the key's later events wait behind it until its row is
<strong>requeued</strong> (sent again, first) or <strong>skipped</strong> (left dead; the others go without it).
<span data-count="blocked-keys">${total}</span> keys are blocked${keys.length < total ? `; the ${keys.length} held longest are listed` : ""}.</p>
<table id="blocked-keys">
<caption>Blocked keys, held longest first</caption>
<thead><tr><th scope="col">Ordering key</th><th scope="col">Topic</th><th scope="col">Dead head (event)</th><th scope="col">Reason</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Dead for</th><th scope="col" class="num">Waiting behind</th>${context.readOnly ? "" : html`<th scope="col">Actions</th>`}</tr></thead>
<tbody>
${keys.map(
  (key) => html`<tr data-key="${shown(key.orderingKey)}">
<th scope="row">${shown(key.orderingKey)}</th><td>${shown(key.topic)}</td>
<td><span class="type">${shown(key.eventType)}</span> <code>${shown(key.eventId)}</code></td>
<td>${shown(key.lastError, REASON_SHOWN)}</td><td class="num">${key.attempts}</td>
<td class="num">${age(key.deadSeconds)}</td><td class="num" data-count="waiting">${key.waiting}</td>
${
  context.readOnly
    ? ""
    : html`<td>${previewForm(context, "requeue", "Requeue head", { id: key.eventId }, `Requeue the head of key ${shown(key.orderingKey)}`)} ${previewForm(context, "skip", "Skip head", { id: key.eventId }, `Skip the head of key ${shown(key.orderingKey)}`)}</td>`
}</tr>`,
)}
</tbody></table></div>`;
}
