import type { ActionOutcome, ActionPreview } from "../actions/perform.js";
import { type Html, html } from "../html.js";
import { ACTION_LABELS, type ActionContext, type ActionName, csrfField } from "./forms.js";

/** The most ids a preview lists by name; the count covers them all. */
const IDS_LISTED = 20;

const NOUN: Readonly<Record<ActionName, string>> = {
  requeue: "dead rows",
  skip: "dead rows",
  redrive: "dead letters",
};

const WHAT_IT_DOES: Readonly<Record<ActionName, string>> = {
  requeue:
    "Each gets a fresh set of attempts and is available at once, before its key's later events (relay requeue-dead). A claim-checked row older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS stays dead.",
  skip: "Each stays dead; its key's later events go out without it (relay skip-dead).",
  redrive:
    "Each is sent back to the consumer's queue, then deleted from the DLQ (consumer redrive). A claim-checked message whose object is gone stays.",
};

/** Where to go back to after an action. */
export function returnPath(action: ActionName): string {
  return action === "redrive" ? "/dead-letters" : "/dead-rows";
}

/** "This will requeue 37 dead rows", the first ids by name, and the button that confirms exactly those. */
export function previewView(preview: ActionPreview, context: ActionContext): Html {
  const count = preview.ids.length;
  const back = returnPath(preview.action);
  if (count === 0) {
    return html`<p id="preview-count" data-count="0">Nothing to ${preview.action}: no ${NOUN[preview.action]} match (any more).</p>
<p><a href="${back}">Back</a></p>`;
  }
  const verb = ACTION_LABELS[preview.action].toLowerCase();
  return html`<p id="preview-count" data-count="${count}">This will ${verb} <strong>${count}</strong> ${NOUN[preview.action]}${
    preview.capped ? " (the most one action takes; run it again for the rest)" : ""
  }.</p>
<p>${WHAT_IT_DOES[preview.action]}</p>
<ul class="ids">${preview.ids.slice(0, IDS_LISTED).map((id) => html`<li><code>${id}</code></li>`)}${
    count > IDS_LISTED ? html`<li>… and ${count - IDS_LISTED} more</li>` : ""
  }</ul>
<form method="post" action="/actions/run">
${csrfField(context)}
<input type="hidden" name="action" value="${preview.action}">
<input type="hidden" name="ids" value="${preview.ids.join(",")}">
<input type="hidden" name="asked" value="${JSON.stringify(preview.asked)}">
<button type="submit" id="confirm">${ACTION_LABELS[preview.action]} ${count} ${NOUN[preview.action]}</button>
<a href="${back}">Cancel</a>
</form>`;
}

/** What the action did, in the command's counts. */
export function reportView(outcome: ActionOutcome, asked: number): Html {
  let said: Html;
  if (outcome.action === "requeue") {
    said = html`<p id="report" data-count="${outcome.requeued}">Requeued <strong>${outcome.requeued}</strong> of ${asked} dead rows.</p>${
      outcome.refused.length > 0
        ? html`<p class="alert" role="alert">${outcome.refused.length} claim-checked rows stay dead: older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS, their objects may expire before a message is read; the application must enqueue them again.</p>`
        : ""
    }`;
  } else if (outcome.action === "skip") {
    said = html`<p id="report" data-count="${outcome.skipped}">Skipped <strong>${outcome.skipped}</strong> of ${asked} dead rows: their keys' later events go out.</p>`;
  } else {
    const problems = [
      outcome.failed > 0 ? `${outcome.failed} failed to send and stay in the DLQ` : "",
      outcome.objectGone > 0 ? `${outcome.objectGone} stay: their claim-checked object is gone` : "",
      outcome.undeleted > 0
        ? `${outcome.undeleted} were sent but are still in the DLQ too (the inbox drops the copy)`
        : "",
      outcome.complete ? "" : "the walk of the DLQ did not finish: run it again",
    ].filter((text) => text !== "");
    said = html`<p id="report" data-count="${outcome.moved}">Redrove <strong>${outcome.moved}</strong> of ${asked} dead letters to the queue.</p>${
      problems.length > 0 ? html`<p class="alert" role="alert">${problems.join("; ")}.</p>` : ""
    }`;
  }
  return html`${said}<p><a href="${returnPath(outcome.action)}" id="back">Back to the ${NOUN[outcome.action]}</a></p>`;
}
