/** What a relay scenario sets up before its subject runs: the outbox database and the topic. */
import { randomUUID } from "node:crypto";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import { bootstrapResources, snsClient } from "@outbox/devstack";
import type { BenchContext } from "./context.js";
import { createEmptyDatabase, freshDatabase, ourBacklog } from "./fixtures.js";
import type { RelaySubject } from "./jobs.js";
import { ptoBacklog, ptoSetup } from "./pto-fixtures.js";

/** Connections each relay may use for its work, ours and the peers alike. */
export const RELAY_POOL_MAX = 20;

/**
 * A topic named after the label, subscribed by a queue unless `withoutSubscribers` (see
 * RelaySetup.withoutSubscribers for why a run would want none).
 */
export async function benchTopic(
  ctx: BenchContext,
  label: string,
  withoutSubscribers = false,
): Promise<string> {
  const name = `bench-${label}-${randomUUID().slice(0, 8)}`;
  if (withoutSubscribers) {
    const { TopicArn } = await snsClient(ctx.stack.aws).send(new CreateTopicCommand({ Name: name }));
    if (TopicArn === undefined) throw new Error(`CreateTopic ${name} returned no TopicArn`);
    return TopicArn;
  }
  const { topicArn } = await bootstrapResources(ctx.stack.aws, {
    name,
    rawDelivery: true,
  });
  return topicArn;
}

/** A database holding `events` unsent events in the subject's own outbox. */
export async function preparedRelayDatabase(ctx: BenchContext, impl: RelaySubject, events: number) {
  // The bare SDK reads no table: an empty database keeps its run's set-up and clean-up the relays'.
  if (impl === "bare-sdk")
    return { url: await createEmptyDatabase(ctx.stack.postgres.adminUrl, "bench_bare"), pto: undefined };
  if (impl === "ours") {
    const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl);
    await ourBacklog(handle, events);
    await handle.close(5_000);
    return { url, pto: undefined };
  }
  const url = await createEmptyDatabase(ctx.stack.postgres.adminUrl, "bench_pto");
  const pto = await ptoSetup(url, impl === "pto-replication");
  await ptoBacklog(url, events);
  return { url, pto };
}
