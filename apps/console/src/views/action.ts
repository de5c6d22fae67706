import { LATER_NAMED } from "@outbox/relay/operations";
import type { ActionOutcome, ActionPreview, RequeuePreview } from "../actions/perform.js";
import { type Html, html, shown } from "../html.js";
import { deadRowFields } from "./filters.js";
import { ACTION_LABELS, type ActionContext, type ActionName, csrfField, previewForm } from "./forms.js";

/** The most ids a preview lists by name; the count covers them all. */
const IDS_LISTED = 20;

const NOUN: Readonly<Record<ActionName, string>> = {
  requeue: "dead rows",
  skip: "dead rows",
  redrive: "dead letters",
};

const WHAT_IT_DOES: Readonly<Record<ActionName, string>> = {
  requeue:
    "Each gets a fresh set of attempts and is available at once, before its key's waiting events (relay requeue-dead). What happens to each row and its key is below.",
  skip: "Each stays dead; its key's later events go out without it (relay skip-dead).",
  redrive:
    "Each is sent back to the consumer's queue, then deleted from the DLQ (consumer redrive). A claim-checked message whose object is gone stays.",
};

/** Where to go back to after an action. */
export function returnPath(action: ActionName): string {
  return action === "redrive" ? "/dead-letters" : "/dead-rows";
}

/** What a requeue does with one row and its key, in words (the fates of requeueFate). */
function requeueSaid(entry: RequeuePreview["rows"][number]): string {
  const { row, fate } = entry;
  if (fate === "skipped") {
    return "left out: skipped (its key went on without it); ask again with the skipped rows to take it";
  }
  if (fate === "claim-check-aged") {
    return "stays dead: claim-checked and older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS; the application must enqueue it again";
  }
  if (fate === "overtaken" || fate === "requeued-out-of-order") {
    const more = row.laterSent.length >= LATER_NAMED ? " and more" : "";
    return `stays dead: its key already sent later events while it was skipped (${row.laterSent.join(", ")}${more}); only the out-of-order confirmation sends it, after them`;
  }
  if (row.orderingKey === null) return "sent again (no ordering key: no order to keep)";
  return row.waiting === 0
    ? "sent again; nothing of its key is waiting"
    : `sent again, before its key's ${row.waiting} waiting events`;
}

/** Each row of a requeue, its key and its fate; the confirmations for in order and out of order. */
function requeuePlan(preview: ActionPreview, requeue: RequeuePreview, context: ActionContext): Html {
  const overtaken = requeue.rows.filter(({ fate }) => fate === "overtaken").length;
  const skipped = requeue.rows.filter(({ fate }) => fate === "skipped").length;
  const listed = requeue.rows.slice(0, IDS_LISTED);
  return html`<table id="requeue-plan">
<caption>What happens to each row and its key${requeue.rows.length > IDS_LISTED ? ` (the first ${IDS_LISTED} of ${requeue.rows.length})` : ""}</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Ordering key</th><th scope="col">What happens</th></tr></thead>
<tbody>${listed.map(
    (entry) =>
      html`<tr data-id="${entry.row.id}" data-fate="${entry.fate}"><th scope="row"><code>${entry.row.id}</code></th><td>${shown(entry.row.orderingKey)}</td><td>${requeueSaid(entry)}</td></tr>`,
  )}</tbody></table>
${
  overtaken === 0
    ? ""
    : html`<form method="post" action="/actions/run" id="out-of-order">
${csrfField(context)}
<input type="hidden" name="action" value="requeue">
<input type="hidden" name="ids" value="${requeue.outOfOrderIds.join(",")}">
<input type="hidden" name="asked" value="${JSON.stringify(preview.asked)}">
<p class="alert" role="alert"><strong>${overtaken}</strong> of these rows stay dead: their keys already sent the later events named above. Requeued anyway, each goes out <strong>after</strong> them, out of its key's order.</p>
<p><input type="checkbox" name="out_of_order" value="1" id="accept-out-of-order" required>
<label for="accept-out-of-order">Send them out of order, after their keys' later events</label></p>
<button type="submit" id="confirm-out-of-order">Requeue ${requeue.outOfOrderIds.length} dead rows, ${overtaken} out of order</button>
</form>`
}${
  skipped === 0 || requeue.filter === null
    ? ""
    : html`<p>${skipped} skipped rows are left out: their keys went on without them. ${previewForm(
        context,
        "requeue",
        "Preview with the skipped rows too",
        { ...deadRowFields(requeue.filter), skipped: "1" },
      )}</p>`
}`;
}

/** "This will requeue 37 dead rows", the first ids by name, and the button that confirms exactly those. */
export function previewView(preview: ActionPreview, context: ActionContext): Html {
  const count = preview.ids.length;
  const back = returnPath(preview.action);
  if (count === 0 && preview.requeue !== undefined && preview.requeue.rows.length > 0) {
    return html`<p id="preview-count" data-count="0">Nothing to requeue in order.</p>
${requeuePlan(preview, preview.requeue, context)}
<p><a href="${back}">Back</a></p>`;
  }
  if (count === 0) {
    return html`<p id="preview-count" data-count="0">Nothing to ${preview.action}: no ${NOUN[preview.action]} match (any more).</p>
<p><a href="${back}">Back</a></p>`;
  }
  const verb = ACTION_LABELS[preview.action].toLowerCase();
  return html`<p id="preview-count" data-count="${count}">This will ${verb} <strong>${count}</strong> ${NOUN[preview.action]}${
    preview.capped ? " (the most one action takes; run it again for the rest)" : ""
  }.</p>
<p>${WHAT_IT_DOES[preview.action]}</p>
${
  preview.requeue === undefined
    ? html`<ul class="ids">${preview.ids.slice(0, IDS_LISTED).map((id) => html`<li><code>${id}</code></li>`)}${
        count > IDS_LISTED ? html`<li>… and ${count - IDS_LISTED} more</li>` : ""
      }</ul>`
    : ""
}
<form method="post" action="/actions/run">
${csrfField(context)}
<input type="hidden" name="action" value="${preview.action}">
<input type="hidden" name="ids" value="${preview.ids.join(",")}">
<input type="hidden" name="asked" value="${JSON.stringify(preview.asked)}">
<button type="submit" id="confirm">${ACTION_LABELS[preview.action]} ${count} ${NOUN[preview.action]}${preview.requeue === undefined ? "" : ", in order"}</button>
<a href="${back}">Cancel</a>
</form>
${preview.requeue === undefined ? "" : requeuePlan(preview, preview.requeue, context)}`;
}

/** What the action did, in the command's counts. */
export function reportView(outcome: ActionOutcome, asked: number): Html {
  let said: Html;
  if (outcome.action === "requeue") {
    said = html`<p id="report" data-count="${outcome.requeued}">Requeued <strong>${outcome.requeued}</strong> of ${asked} dead rows.</p>${
      outcome.refused.length > 0
        ? html`<p class="alert" role="alert">${outcome.refused.length} claim-checked rows stay dead: older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS, their objects may expire before a message is read; the application must enqueue them again.</p>`
        : ""
    }${
      outcome.overtaken.length > 0
        ? html`<p class="alert" role="alert" id="overtaken">${outcome.overtaken.length} rows stay dead: their keys sent later events since the preview; preview the requeue again to see them.</p>`
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
