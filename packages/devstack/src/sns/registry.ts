import { randomUUID } from "node:crypto";
import { invalidParameter, subscriptionNotFound, topicNotFound } from "./errors.js";

export interface Topic {
  readonly arn: string;
  readonly name: string;
  readonly fifo: boolean;
  readonly attributes: Record<string, string>;
  readonly subscriptionArns: Set<string>;
  /** FIFO topics number their messages; SNS returns and forwards this as `SequenceNumber`. */
  nextSequence: bigint;
}

export interface Subscription {
  readonly arn: string;
  readonly topicArn: string;
  readonly protocol: string;
  readonly endpoint: string;
  readonly attributes: Record<string, string>;
}

/** The emulator's in-memory account: topics and their subscriptions, addressed by ARN. */
export class Registry {
  readonly topics = new Map<string, Topic>();
  readonly subscriptions = new Map<string, Subscription>();

  constructor(
    readonly region: string,
    readonly accountId: string,
  ) {}

  topicArn(name: string): string {
    return `arn:aws:sns:${this.region}:${this.accountId}:${name}`;
  }

  topic(arn: string | undefined): Topic {
    if (!arn) throw invalidParameter("TopicArn");
    const topic = this.topics.get(arn);
    if (!topic) throw topicNotFound();
    return topic;
  }

  addTopic(name: string, fifo: boolean, attributes: Record<string, string>): Topic {
    const topic: Topic = {
      arn: this.topicArn(name),
      name,
      fifo,
      attributes,
      subscriptionArns: new Set(),
      nextSequence: 10_000_000_000_000_000_000n,
    };
    this.topics.set(topic.arn, topic);
    return topic;
  }

  deleteTopic(arn: string): void {
    const topic = this.topics.get(arn);
    if (!topic) return;
    for (const subscriptionArn of topic.subscriptionArns) this.subscriptions.delete(subscriptionArn);
    this.topics.delete(arn);
  }

  subscription(arn: string | undefined): Subscription {
    const subscription = arn ? this.subscriptions.get(arn) : undefined;
    if (!subscription) throw subscriptionNotFound();
    return subscription;
  }

  subscribe(
    topic: Topic,
    protocol: string,
    endpoint: string,
    attributes: Record<string, string>,
  ): Subscription {
    // SNS answers a repeated Subscribe for the same endpoint with the existing subscription.
    for (const arn of topic.subscriptionArns) {
      const existing = this.subscriptions.get(arn);
      if (existing && existing.protocol === protocol && existing.endpoint === endpoint) return existing;
    }
    const subscription: Subscription = {
      arn: `${topic.arn}:${randomUUID()}`,
      topicArn: topic.arn,
      protocol,
      endpoint,
      attributes,
    };
    this.subscriptions.set(subscription.arn, subscription);
    topic.subscriptionArns.add(subscription.arn);
    return subscription;
  }

  unsubscribe(arn: string): void {
    const subscription = this.subscriptions.get(arn);
    if (!subscription) return;
    this.topics.get(subscription.topicArn)?.subscriptionArns.delete(arn);
    this.subscriptions.delete(arn);
  }

  subscriptionsOf(topic: Topic): Subscription[] {
    return [...topic.subscriptionArns].flatMap((arn) => this.subscriptions.get(arn) ?? []);
  }
}
