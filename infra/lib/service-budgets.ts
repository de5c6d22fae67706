import { type ConsumerBudget, consumerBudget, type RelayBudget, relayBudget } from "./budget.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";

/** The relay's and the consumer's stop budgets and the consumer's task range, from the stack's props. */
export interface ServiceBudgets {
  readonly relay: RelayBudget;
  readonly consumer: ConsumerBudget;
  readonly minTaskCount: number;
  readonly maxTaskCount: number;
}

export function serviceBudgets(props: OutboxWorkersStackProps): ServiceBudgets {
  const relayOptions = props.relay ?? {};
  const consumerOptions = props.consumer ?? {};
  const minTaskCount = consumerOptions.minTaskCount ?? 2;
  const maxTaskCount = consumerOptions.maxTaskCount ?? 10;
  if (minTaskCount < 1 || maxTaskCount < minTaskCount) {
    throw new Error("consumer: need 1 ≤ minTaskCount ≤ maxTaskCount");
  }
  const relay = relayBudget({
    ...(relayOptions.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: relayOptions.drainTimeoutMs }),
  });
  const consumer = consumerBudget({
    maxTaskCount,
    ...(consumerOptions.drainTimeoutMs === undefined
      ? {}
      : { drainTimeoutMs: consumerOptions.drainTimeoutMs }),
    ...(consumerOptions.waitTimeSeconds === undefined
      ? {}
      : { waitTimeSeconds: consumerOptions.waitTimeSeconds }),
    ...(consumerOptions.visibilityTimeoutSeconds === undefined
      ? {}
      : { visibilityTimeoutSeconds: consumerOptions.visibilityTimeoutSeconds }),
  });
  return { relay, consumer, minTaskCount, maxTaskCount };
}
