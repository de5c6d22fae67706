import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { bounded, type DlqQueues } from "@outbox/consumer/operations";

/** SQS's approximate counts of one queue (they lag the truth by about a minute, as SQS says). */
export interface QueueDepth {
  readonly url: string;
  /** Waiting to be received. */
  readonly visible: number;
  /** Received and not yet deleted or released (being worked on, or held by a listing). */
  readonly inFlight: number;
  readonly delayed: number;
}

const COUNTS = [
  "ApproximateNumberOfMessages",
  "ApproximateNumberOfMessagesNotVisible",
  "ApproximateNumberOfMessagesDelayed",
] as const;

/** One GetQueueAttributes, bounded by one SQS call's budget: cheap enough to ask at every refresh. */
export async function queueDepth(queues: DlqQueues, url: string): Promise<QueueDepth> {
  const { Attributes = {} } = await bounded(queues.callTimeoutMs, (signal) =>
    queues.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...COUNTS] }), {
      abortSignal: signal,
    }),
  );
  return {
    url,
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}
