import { EVENT_ID_ATTRIBUTE } from "@outbox/client";

/** Publish statistics of one topic, counted since the emulator started or the last reset. */
export interface TopicStats {
  /** Messages accepted: successful Publish calls plus successful PublishBatch entries. */
  published: number;
  /** Messages handed to SQS by the fan-out (one per message and subscription). */
  delivered: number;
  /** Deliveries SQS refused or that failed on the way (AWS would drop these silently). */
  deliveryFailures: number;
  /** Accepted messages that carried the event-id message attribute (default `event_id`). */
  withEventId: number;
  /** Distinct event-id values among them. */
  distinctEventIds: number;
  /**
   * Publishes of an event id already published before: `withEventId − distinctEventIds`, which
   * is `published − distinctEventIds` when every message carries an event id.
   */
  republished: number;
  /**
   * True once the topic saw more distinct event ids than the tracker keeps
   * (`EmulatorStats.maxTrackedEventIds`); the id counts are then lower bounds.
   */
  eventIdsTruncated: boolean;
}

/** What `GET /_stats` answers. */
export interface EmulatorStats {
  /** ISO time of the emulator's start or of the last `DELETE /_stats`. */
  since: string;
  /** The message attribute whose values are counted as event ids. */
  eventIdAttribute: string;
  maxTrackedEventIds: number;
  /** Keyed by topic ARN; topics without any publish since `since` are absent. */
  topics: Record<string, TopicStats>;
}

interface TopicCounter {
  published: number;
  delivered: number;
  deliveryFailures: number;
  withEventId: number;
  eventIds: Set<string>;
  truncated: boolean;
}

/** Default bound on the event ids remembered per topic (~100 MB of short strings at worst). */
export const DEFAULT_MAX_TRACKED_EVENT_IDS = 2_000_000;

/** Counters the emulator updates on its hot path: a map lookup and a few increments. */
export class PublishStats {
  #since = new Date();
  #topics = new Map<string, TopicCounter>();

  constructor(
    readonly eventIdAttribute = EVENT_ID_ATTRIBUTE,
    readonly maxTrackedEventIds = DEFAULT_MAX_TRACKED_EVENT_IDS,
  ) {}

  #counter(topicArn: string): TopicCounter {
    let counter = this.#topics.get(topicArn);
    if (!counter) {
      counter = {
        published: 0,
        delivered: 0,
        deliveryFailures: 0,
        withEventId: 0,
        eventIds: new Set(),
        truncated: false,
      };
      this.#topics.set(topicArn, counter);
    }
    return counter;
  }

  /** One accepted message; `eventId` is the value of the event-id attribute, if it has one. */
  published(topicArn: string, eventId: string | undefined): void {
    const counter = this.#counter(topicArn);
    counter.published += 1;
    if (eventId === undefined) return;
    counter.withEventId += 1;
    if (counter.eventIds.size < this.maxTrackedEventIds || counter.eventIds.has(eventId)) {
      counter.eventIds.add(eventId);
    } else {
      counter.truncated = true;
    }
  }

  delivered(topicArn: string, count: number): void {
    this.#counter(topicArn).delivered += count;
  }

  deliveryFailed(topicArn: string, count: number): void {
    this.#counter(topicArn).deliveryFailures += count;
  }

  reset(): void {
    this.#since = new Date();
    this.#topics = new Map();
  }

  snapshot(): EmulatorStats {
    const topics: Record<string, TopicStats> = {};
    for (const [arn, c] of this.#topics) {
      topics[arn] = {
        published: c.published,
        delivered: c.delivered,
        deliveryFailures: c.deliveryFailures,
        withEventId: c.withEventId,
        distinctEventIds: c.eventIds.size,
        republished: c.withEventId - c.eventIds.size,
        eventIdsTruncated: c.truncated,
      };
    }
    return {
      since: this.#since.toISOString(),
      eventIdAttribute: this.eventIdAttribute,
      maxTrackedEventIds: this.maxTrackedEventIds,
      topics,
    };
  }
}
