import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";

/** The window the rates and the lag are drawn over, in minutes, one point a minute. */
export const FLOW_MINUTES = 60;

/** Per minute of the last hour, oldest first: what the charts draw. */
export interface MinuteSeries {
  /** Each minute's start, Unix seconds. */
  readonly minutes: readonly number[];
  /** Events published per minute, per topic. */
  readonly published: Readonly<Record<string, readonly number[]>>;
  /**
   * The relay's lag as the published rows lived it: the longest wait, in seconds, from due (created,
   * or scheduled) to published, of the rows published in that minute; null in a minute with none.
   */
  readonly lagSeconds: readonly (number | null)[];
  /** Events processed per minute (their inbox rows), per consumer. */
  readonly processed: Readonly<Record<string, readonly number[]>>;
}

function emptySeries(minutes: readonly number[]): number[] {
  return minutes.map(() => 0);
}

/**
 * The last hour from the outbox's own publish times and the inbox's processing times, both range
 * scans of their time indexes (`outbox_published_at`, `inbox_processed_at`): the cost is the hour's
 * traffic, never the history before it.
 */
export async function readMinuteSeries(db: Kysely<Database>): Promise<MinuteSeries> {
  const { rows: clock } = await sql<{ now: number }>`
    SELECT extract(epoch FROM date_trunc('minute', now()))::float8 AS now
  `.execute(db);
  const last = clock[0]?.now ?? Math.floor(Date.now() / 60_000) * 60;
  const minutes = Array.from({ length: FLOW_MINUTES }, (_, index) => last - (FLOW_MINUTES - 1 - index) * 60);
  const slot = (minute: number) => minutes.indexOf(minute);
  const { rows: published } = await sql<{ topic: string; minute: number; published: string; lag: number }>`
    SELECT o.topic, extract(epoch FROM date_trunc('minute', o.published_at))::float8 AS minute,
           count(*) AS published,
           max(extract(epoch FROM o.published_at - greatest(o.created_at, o.deliver_at)))::float8 AS lag
    FROM outbox o
    WHERE o.published_at IS NOT NULL
      AND o.published_at >= date_trunc('minute', now()) - ${FLOW_MINUTES - 1} * interval '1 minute'
    GROUP BY 1, 2
  `.execute(db);
  const { rows: processed } = await sql<{ consumer: string; minute: number; processed: string }>`
    SELECT i.consumer, extract(epoch FROM date_trunc('minute', i.processed_at))::float8 AS minute,
           count(*) AS processed
    FROM inbox i
    WHERE i.processed_at >= date_trunc('minute', now()) - ${FLOW_MINUTES - 1} * interval '1 minute'
    GROUP BY 1, 2
  `.execute(db);
  const publishedBy: Record<string, number[]> = {};
  const lagSeconds: (number | null)[] = minutes.map(() => null);
  for (const row of published) {
    const at = slot(row.minute);
    if (at < 0) continue;
    const series = publishedBy[row.topic] ?? emptySeries(minutes);
    publishedBy[row.topic] = series;
    series[at] = Number(row.published);
    lagSeconds[at] = Math.max(lagSeconds[at] ?? 0, Math.round(row.lag * 1_000) / 1_000);
  }
  const processedBy: Record<string, number[]> = {};
  for (const row of processed) {
    const at = slot(row.minute);
    if (at < 0) continue;
    const series = processedBy[row.consumer] ?? emptySeries(minutes);
    processedBy[row.consumer] = series;
    series[at] = Number(row.processed);
  }
  return { minutes, published: publishedBy, lagSeconds, processed: processedBy };
}
