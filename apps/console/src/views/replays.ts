import { type Html, html, shown } from "../html.js";
import type { ReplayRun } from "../reads/replays.js";
import type { ActionContext } from "./forms.js";
import { resumeReplayForm, startReplayForm, stopReplayForm } from "./replay-forms.js";

/**
 * `relay republish` runs: their range, how far they got; resume one, or start one (when the console
 * has the relay's topic routing and may act); stop one this console works (`running`).
 */
export function replaysView(
  runs: readonly ReplayRun[],
  context: ActionContext,
  republishes: boolean,
  running: ReadonlySet<string>,
): Html {
  const acts = republishes && !context.readOnly;
  const start = acts
    ? html`<section aria-labelledby="start-heading"><h2 id="start-heading">Start a republish</h2>${startReplayForm(context)}</section>`
    : html`<p>${context.readOnly ? "Read-only" : "No topic routing (RELAY_TOPIC_ARNS, RELAY_DEFAULT_TOPIC_ARN)"}: runs are started with <code>relay republish --from TIME</code>.</p>`;
  if (runs.length === 0) {
    return html`<div id="replays" data-live><p>No republish run yet.</p></div>${start}`;
  }
  return html`<div id="replays" data-live>
<p>A republish re-sends events already published in a time range, marked <code>replay=true</code>; its progress is
kept after each batch, so a stopped run resumes with no gap: <code>relay republish --resume RUN</code>.</p>
<table id="replays-table">
<caption>Republish runs, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Range (published)</th><th scope="col">Topic</th><th scope="col">Key</th><th scope="col" class="num">Rate /s</th><th scope="col" class="num">Sent</th><th scope="col" class="num">Skipped</th><th scope="col" class="num">Left</th><th scope="col">Progress</th><th scope="col">State</th></tr></thead>
<tbody>
${runs.map((run) => {
  const total = run.sent + run.skipped + run.left;
  return html`<tr data-run="${run.id}"><th scope="row"><code>${run.id}</code></th><td>${run.from} → ${run.to}</td>
<td>${run.topic === null ? "all" : shown(run.topic)}</td><td>${run.orderingKey === null ? "all" : shown(run.orderingKey)}</td>
<td class="num">${run.rate}</td><td class="num" data-count="sent">${run.sent}</td><td class="num">${run.skipped}</td><td class="num" data-count="left">${run.left}${run.leftCapped ? "+" : ""}</td>
<td><progress max="${Math.max(total, 1)}" value="${run.sent + run.skipped}" aria-label="run ${run.id}: ${run.sent + run.skipped} of ${total}">${run.sent + run.skipped} of ${total}</progress></td>
<td>${
    run.finished
      ? "finished"
      : running.has(run.id)
        ? html`running in this console${acts ? stopReplayForm(context, run.id) : ""}`
        : html`<span class="alert">not finished</span> (stopped, or worked elsewhere): <code>relay republish --resume ${run.id}</code>${acts ? resumeReplayForm(context, run) : ""}`
  }</td></tr>`;
})}
</tbody></table></div>${start}`;
}
