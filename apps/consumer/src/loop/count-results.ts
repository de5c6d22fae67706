import type { ConsumerMetrics, MessageResult } from "../metrics.js";

/** Counts since start. */
export interface ConsumerCounts {
  readonly processed: number;
  readonly duplicates: number;
  readonly released: number;
  readonly poison: number;
  readonly failed: number;
}

/** How the messages ended: the counts `stats()` reports and the metrics labelled by result. */
export class ResultCounts {
  readonly #metrics: ConsumerMetrics;
  readonly #counts: Record<Exclude<MessageResult, "duplicate">, number> & { duplicates: number } = {
    processed: 0,
    duplicates: 0,
    released: 0,
    poison: 0,
    failed: 0,
  };
  // Labelled children made once: prom-client hashes a labels object on every inc/observe otherwise.
  readonly #resultCounters = new Map<MessageResult, { inc(): void }>();
  readonly #handlerTimers = new Map<MessageResult, { observe(value: number): void }>();

  constructor(metrics: ConsumerMetrics) {
    this.#metrics = metrics;
  }

  /** One message settled. */
  count(result: MessageResult): void {
    if (result === "duplicate") this.#counts.duplicates += 1;
    else this.#counts[result] += 1;
    this.#resultCounter(result).inc();
    if (result === "duplicate") this.#metrics.duplicates.inc();
  }

  /** How long a message's inbox transaction (and what settled it) took. */
  observeHandler(result: MessageResult, seconds: number): void {
    let timer = this.#handlerTimers.get(result);
    if (timer === undefined) {
      timer = this.#metrics.handlerSeconds.labels({ result });
      this.#handlerTimers.set(result, timer);
    }
    timer.observe(seconds);
  }

  snapshot(): ConsumerCounts {
    return { ...this.#counts };
  }

  #resultCounter(result: MessageResult): { inc(): void } {
    let counter = this.#resultCounters.get(result);
    if (counter === undefined) {
      counter = this.#metrics.results.labels({ result });
      this.#resultCounters.set(result, counter);
    }
    return counter;
  }
}
