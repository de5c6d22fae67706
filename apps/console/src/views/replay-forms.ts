import type { RepublishRequest, RepublishRun } from "@outbox/relay/operations";
import { type Html, html, shown } from "../html.js";
import type { ActionContext } from "./forms.js";
import { csrfField } from "./forms.js";

/** The safety rule of a replay, asked with every start and resume: the inbox retention, or allow re-applying. */
function guardFields(id: string): Html {
  return html`<label>Consumers' inbox retention, hours <input name="retention" id="${id}-retention" inputmode="numeric" size="5" aria-describedby="${id}-why"></label>
<label><input type="checkbox" name="allowReapply" id="${id}-allow"> or allow re-applying older events</label>
<span id="${id}-why" class="visually-hidden">Rows published longer ago than the consumers' CONSUMER_INBOX_RETENTION_HOURS may have lost their inbox rows: their effects would apply again.</span>`;
}

/** "Start a republish": the range and filters of `relay republish`, previewed before anything is sent. */
export function startReplayForm(context: ActionContext): Html {
  return html`<form method="post" action="/replays/preview" class="filters" id="start-replay" aria-label="Start a republish">
${csrfField(context)}
<label>From (published at or after) <input name="from" required placeholder="2026-12-01T10:00:00Z" size="24"></label>
<label>To (before; empty: now) <input name="to" placeholder="2026-12-01T11:00:00Z" size="24"></label>
<label>Topic (empty: all) <input name="topic" size="12"></label>
<label>Ordering key (empty: all) <input name="key" size="12"></label>
<label>Events per second <input name="rate" inputmode="numeric" size="5" placeholder="100"></label>
${guardFields("start")}
<button type="submit">Preview the republish</button>
</form>`;
}

/** "Resume" for a run that has not finished: it goes on from its cursor, with no gap. */
export function resumeReplayForm(context: ActionContext, run: RepublishRun): Html {
  return html`<form method="post" action="/replays/preview" class="filters resume" aria-label="Resume run ${run.id}">
${csrfField(context)}<input type="hidden" name="run" value="${run.id}">
${guardFields(`resume-${run.id}`)}
<button type="submit">Resume</button>
</form>`;
}

/** What a republish will send; the confirmation carries the same request back, and its key (`key`: one run however often it is posted). */
export function replayPreviewView(
  request: RepublishRequest,
  rows: number,
  key: string,
  context: ActionContext,
): Html {
  const guard =
    request.reapply === "allow-reapply"
      ? "re-applying allowed: consumers whose inbox no longer holds these events will apply their effects again"
      : `refused if the range holds rows published more than ${request.reapply.inboxRetentionHours} h ago (the consumers' inbox retention)`;
  const what =
    request.kind === "new"
      ? html`re-send <strong id="preview-count" data-count="${rows}">${rows}</strong> events published from ${request.from} to ${request.to ?? "now"}
(topic ${request.topic === undefined ? "all" : shown(request.topic)}, key ${request.orderingKey === undefined ? "all" : shown(request.orderingKey)}), at ${request.rate} per second`
      : html`resume run <code>${request.id}</code>: <strong id="preview-count" data-count="${rows}">${rows}</strong> events left${request.rate === undefined ? "" : `, at ${request.rate} per second`}`;
  const fields: Record<string, string | undefined> =
    request.kind === "new"
      ? {
          from: request.from,
          to: request.to,
          topic: request.topic,
          key: request.orderingKey,
          rate: String(request.rate),
        }
      : { run: request.id, rate: request.rate === undefined ? undefined : String(request.rate) };
  return html`<p>This will ${what}, marked <code>replay=true</code>; ${guard}.</p>
<p>Progress is kept after each batch: a stop of the console (or of this run) leaves it resumable from the Replays view or with <code>relay republish --resume</code>.</p>
<form method="post" action="/replays/run">
${csrfField(context)}<input type="hidden" name="request" value="${key}">
${Object.entries(fields).map(([name, value]) => (value === undefined ? "" : html`<input type="hidden" name="${name}" value="${value}">`))}
${request.reapply === "allow-reapply" ? html`<input type="hidden" name="allowReapply" value="on">` : html`<input type="hidden" name="retention" value="${request.reapply.inboxRetentionHours}">`}
<button type="submit" id="confirm">${request.kind === "new" ? "Start the republish" : "Resume the run"}</button>
<a href="/replays">Cancel</a>
</form>`;
}

/** The run started (it goes on: the Replays view shows its progress), or why it was refused. */
export function replayReportView(
  outcome: { readonly run: RepublishRun; readonly again: boolean } | { readonly refused: string },
): Html {
  if ("refused" in outcome) {
    return html`<p role="alert" class="alert" id="report">Not started: ${outcome.refused}</p><p><a href="/replays" id="back">Back to the replays</a></p>`;
  }
  const done = outcome.again
    ? "was already started by this confirmation (sent twice): nothing more started"
    : outcome.run.cursor === null
      ? "started"
      : "resumed";
  return html`<p id="report">Run <code>${outcome.run.id}</code> ${done}; it goes on in the console, its progress on the Replays view.</p>
<p><a href="/replays" id="back">Back to the replays</a></p>`;
}

/** "Stop" for a run this console works: it ends after its page in hand, resumable. */
export function stopReplayForm(context: ActionContext, id: string): Html {
  return html`<form method="post" action="/replays/stop" class="filters stop" aria-label="Stop run ${id}">
${csrfField(context)}<input type="hidden" name="run" value="${id}">
<button type="submit">Stop</button>
</form>`;
}

/** A stop asked: the run ends after its page in hand. */
export function replayStopView(id: string): Html {
  return html`<p id="report">Run <code>${id}</code> stops after the page in hand; its cursor is kept, so a resume sends the rest with no gap.</p>
<p><a href="/replays" id="back">Back to the replays</a></p>`;
}
