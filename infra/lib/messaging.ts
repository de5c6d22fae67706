import {
  isTopicMessageLimit,
  MAX_TOPIC_MESSAGE_BYTES,
  MIN_TOPIC_MESSAGE_BYTES,
} from "@outbox/client/internal";
import type { DeliveryMode } from "@outbox/consumer";
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { ConsumerBudget } from "./budget.js";

export interface MessagingProps {
  /** FIFO topic and queues (ordered per MessageGroupId, deduplicated per MessageDeduplicationId). */
  readonly fifo?: boolean;
  /** The consumer's numbers: lease, retention and redrive are derived from them. */
  readonly budget: ConsumerBudget;
  /**
   * The topic's `MaximumMessageSize` in bytes, 1 024–1 048 576; SNS's 262 144 when omitted. Above
   * 262 144 SNS allows only SQS, Lambda and Firehose subscriptions, 100 at most: the stack's one SQS
   * subscription is fine. The relay reads it from the topic; the application's `enqueue` must be
   * given the same (`maxMessageBytes`).
   */
  readonly maximumMessageSize?: number;
}

/**
 * The relay's SNS topic, the consumer's SQS queue with its DLQ, and the subscription between them
 * with a DLQ of its own. Raw delivery: the consumer gets the relay's body and message attributes as
 * published, smaller than an envelope and with the attributes first-class; its task is told so
 * (CONSUMER_DELIVERY, from `delivery`), and never unwraps a body that looks like an envelope. TLS
 * only, on the topic and every queue.
 */
export class Messaging extends Construct {
  /** How the subscription delivers, for the consumer's CONSUMER_DELIVERY: the two must agree. */
  readonly delivery: DeliveryMode = "raw";
  readonly topic: sns.Topic;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** Where SNS puts what it could not deliver to the queue (a broken queue policy, a deleted queue). */
  readonly subscriptionDeadLetterQueue: sqs.Queue;
  readonly subscription: sns.Subscription;

  constructor(scope: Construct, id: string, props: MessagingProps) {
    super(scope, id);
    const fifo = props.fifo ?? false;
    const { budget } = props;
    const fifoProps = fifo ? { fifo: true } : {};
    // Messages are the state here: a stack replaced or deleted by mistake must not take undelivered
    // events and dead letters with it. Retained queues are deleted by hand once drained.
    const queueProps = {
      ...fifoProps,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    };

    this.topic = new sns.Topic(this, "Topic", { ...fifoProps, enforceSSL: true });
    const { maximumMessageSize } = props;
    if (maximumMessageSize !== undefined) {
      if (!isTopicMessageLimit(maximumMessageSize)) {
        throw new Error(
          `maximumMessageSize must be an integer from ${MIN_TOPIC_MESSAGE_BYTES} to ${MAX_TOPIC_MESSAGE_BYTES} (bytes), got ${maximumMessageSize}`,
        );
      }
      // The L2 Topic has no prop for it yet; AWS::SNS::Topic has MaximumMessageSize.
      (this.topic.node.defaultChild as sns.CfnTopic).maximumMessageSize = maximumMessageSize;
    }

    // Standard queues keep a moved message's original enqueue time, so the DLQ must retain longer than
    // the queue or a message could expire the moment it lands there.
    this.deadLetterQueue = new sqs.Queue(this, "DeadLetterQueue", {
      ...queueProps,
      retentionPeriod: Duration.seconds(budget.dlqRetentionSeconds),
    });

    this.queue = new sqs.Queue(this, "Queue", {
      ...queueProps,
      // The consumer's lease (CONSUMER_VISIBILITY_TIMEOUT_SECONDS), the same number it passes on receive:
      // short, so a crashed consumer's work returns soon; heartbeats extend it up to the handler deadline.
      visibilityTimeout: Duration.seconds(budget.visibilityTimeoutSeconds),
      // CONSUMER_QUEUE_RETENTION_HOURS: the consumer sizes its inbox retention against this number.
      retentionPeriod: Duration.seconds(budget.queueRetentionSeconds),
      // The consumer long-polls with CONSUMER_WAIT_TIME_SECONDS; the queue default matches it for any
      // other reader (e.g. a redrive tool) so nobody short-polls by accident.
      receiveMessageWaitTime: Duration.seconds(budget.waitTimeSeconds),
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        // HANDLER_ATTEMPTS genuine attempts + the receives that stop waves may spend (see budget.ts):
        // releases with visibility 0 during a stop count as receives.
        maxReceiveCount: budget.maxReceiveCount,
      },
    });

    // SNS retries a delivery to SQS for a while and then drops it; with a DLQ the event is kept, to be
    // sent on to the queue once the cause is fixed. A FIFO topic needs a FIFO DLQ.
    this.subscriptionDeadLetterQueue = new sqs.Queue(this, "SubscriptionDeadLetterQueue", {
      ...queueProps,
      retentionPeriod: Duration.seconds(budget.dlqRetentionSeconds),
    });

    // With the DLQ, CDK also lets SNS send to it: a queue policy for this topic only.
    this.topic.addSubscription(
      new subscriptions.SqsSubscription(this.queue, {
        rawMessageDelivery: this.delivery === "raw",
        deadLetterQueue: this.subscriptionDeadLetterQueue,
      }),
    );
    const subscription = this.node
      .findAll()
      .find((child): child is sns.Subscription => child instanceof sns.Subscription);
    if (!subscription) throw new Error("SqsSubscription created no subscription");
    this.subscription = subscription;
  }
}
