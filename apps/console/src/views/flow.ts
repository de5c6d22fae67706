import { age, type Html, html, jsonBlock, shown } from "../html.js";
import { type Backlog, COUNT_CAP, type Count } from "../reads/backlog.js";
import type { MinuteSeries } from "../reads/flow.js";
import type { QueueDepth } from "../reads/queue-depths.js";

export interface FlowData {
  readonly status: Backlog;
  readonly series: MinuteSeries;
  /** The consumer's queue and DLQ; null when the console has no queue configured. */
  readonly queues:
    | { readonly queue: QueueDepth; readonly dlq: QueueDepth }
    | { readonly error: string }
    | null;
}

/** A count as the page says it: `1234`, `50000+` (capped), `≈ 4000000` (an estimate). */
function counted(count: Count): string {
  if (count.kind === "at least") return `${count.value}+`;
  return count.kind === "estimate" ? `≈ ${count.value}` : String(count.value);
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
/** The last complete minute's count: the current one is still filling. */
const lastMinute = (values: readonly number[]) => values.at(-2) ?? 0;

function topicsTable(status: Backlog, series: MinuteSeries): Html {
  const topics = new Set([...status.topics.map((topic) => topic.topic), ...Object.keys(series.published)]);
  if (topics.size === 0)
    return html`<p>The outbox is empty: nothing unsent, nothing published in the last hour.</p>`;
  const byTopic = new Map(status.topics.map((topic) => [topic.topic, topic]));
  return html`<table id="topics">
<caption>Per topic: the relay's backlog, and what it published in the last hour</caption>
<thead><tr><th scope="col">Topic</th><th scope="col" class="num">Unsent</th><th scope="col" class="num">Oldest unsent</th><th scope="col" class="num">Dead</th><th scope="col" class="num">Blocked keys</th><th scope="col" class="num">Published last hour</th><th scope="col" class="num">Last minute</th></tr></thead>
<tbody>
${[...topics].sort().map((name) => {
  const topic = byTopic.get(name);
  const published = series.published[name] ?? [];
  return html`<tr data-topic="${shown(name)}"><th scope="row">${shown(name)}</th>
<td class="num" data-count="unsent">${topic === undefined ? (status.capped ? "0+" : "0") : counted(topic.unsent)}</td>
<td class="num">${age(topic?.oldestUnsentAgeSeconds ?? null)}</td>
<td class="num${(topic?.dead ?? 0) > 0 ? " alert" : ""}" data-count="dead">${topic?.dead ?? 0}${(topic?.dead ?? 0) > 0 ? html` <span class="flag">needs a decision</span>` : ""}</td>
<td class="num${(topic?.blockedKeys ?? 0) > 0 ? " alert" : ""}" data-count="blocked">${topic?.blockedKeys ?? 0}</td>
<td class="num">${sum(published)}</td>
<td class="num">${lastMinute(published)}</td></tr>`;
})}
</tbody>
<tfoot><tr><th scope="row">All topics</th><td class="num" data-count="total-unsent">${counted(status.total.unsent)}</td><td class="num">${age(status.total.oldestUnsentAgeSeconds)}</td><td class="num" data-count="total-dead">${status.total.dead}</td><td class="num" data-count="total-blocked">${status.total.blockedKeys}</td><td class="num">${sum(Object.values(series.published).flat())}</td><td class="num">${sum(Object.values(series.published).map(lastMinute))}</td></tr></tfoot>
</table>`;
}

function consumersTable(data: FlowData): Html {
  const consumers = Object.keys(data.series.processed).sort();
  const queues = data.queues;
  const depth =
    queues === null
      ? html`<p>No queue configured (CONSUMER_QUEUE_URL, CONSUMER_DLQ_URL): queue and DLQ depths are not shown.</p>`
      : "error" in queues
        ? html`<p class="alert" role="alert">SQS did not answer: ${shown(queues.error, 300)}</p>`
        : html`<table id="queues">
<caption>The consumer's queues (SQS's approximate counts)</caption>
<thead><tr><th scope="col">Queue</th><th scope="col" class="num">Waiting</th><th scope="col" class="num">In flight</th><th scope="col" class="num">Delayed</th></tr></thead>
<tbody>
<tr><th scope="row">queue <span class="url">${shown(queues.queue.url, 300)}</span></th><td class="num" data-count="queue-visible">${queues.queue.visible}</td><td class="num">${queues.queue.inFlight}</td><td class="num">${queues.queue.delayed}</td></tr>
<tr><th scope="row">DLQ <span class="url">${shown(queues.dlq.url, 300)}</span></th><td class="num${queues.dlq.visible + queues.dlq.inFlight > 0 ? " alert" : ""}" data-count="dlq-visible">${queues.dlq.visible}</td><td class="num">${queues.dlq.inFlight}</td><td class="num">${queues.dlq.delayed}</td></tr>
</tbody></table>`;
  return html`${
    consumers.length === 0
      ? html`<p>No event processed in the last hour (the inbox has no row of it).</p>`
      : html`<table id="consumers">
<caption>Per consumer: events processed (inbox rows written)</caption>
<thead><tr><th scope="col">Consumer</th><th scope="col" class="num">Last hour</th><th scope="col" class="num">Last minute</th></tr></thead>
<tbody>${consumers.map((name) => {
          const processed = data.series.processed[name] ?? [];
          return html`<tr><th scope="row">${shown(name)}</th><td class="num">${sum(processed)}</td><td class="num">${lastMinute(processed)}</td></tr>`;
        })}</tbody></table>`
  }${depth}`;
}

/** The flow: the backlog per topic, what went through per minute, the consumer's queues. */
export function flowView(data: FlowData): Html {
  const { status } = data;
  const scheduled =
    status.scheduled.events.value === 0
      ? "none"
      : `${counted(status.scheduled.events)}, the next due at ${status.scheduled.earliestDueAt ?? "—"}`;
  const estimates =
    status.capped || status.scheduled.events.kind !== "exact"
      ? html`<p id="estimates">More than ${COUNT_CAP} rows wait: not counted one by one. <em>N+</em> counts the ${COUNT_CAP} oldest (the relay's next), so a topic has at least that many;
<em>≈ N</em> is Postgres's estimate of the pending rows (their index's size at the last VACUUM or ANALYZE); oldest unsent among the ${COUNT_CAP} oldest.</p>`
      : "";
  return html`<div id="flow" data-live>
<section aria-labelledby="outbox-heading"><h2 id="outbox-heading">Outbox → SNS (the relay)</h2>
${topicsTable(status, data.series)}
<p>Scheduled, not due yet: <span data-count="scheduled">${scheduled}</span>.</p>
${estimates}
</section>
<section aria-labelledby="consumer-heading"><h2 id="consumer-heading">SQS → inbox (the consumers)</h2>
${consumersTable(data)}
</section>
</div>
<section aria-labelledby="charts-heading"><h2 id="charts-heading">The last hour, per minute</h2>
<figure><div class="chart" id="chart-rates" role="img" aria-label="Events published and processed per minute over the last hour; the tables above give the totals"></div>
<figcaption>Published (per topic) and processed (per consumer), events per minute.</figcaption></figure>
<figure><div class="chart" id="chart-lag" role="img" aria-label="The relay's lag per minute over the last hour, in seconds"></div>
<figcaption>Lag: the longest wait from due to published among the events published in each minute, in seconds.</figcaption></figure>
</section>
<div id="flow-data" data-live>${jsonBlock("flow-series", data.series)}</div>`;
}
