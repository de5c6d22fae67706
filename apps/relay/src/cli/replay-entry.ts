import { MAX_MESSAGE_ATTRIBUTES, measureMessage, REPLAY_ATTRIBUTE } from "@outbox/client/internal";
import type { ClaimedRow } from "../outbox-store.js";
import { type BuiltEntry, buildEntry, type LimitResolver, type TopicResolver } from "../sns/entries.js";

/**
 * The message a published row becomes again, marked as a replay: the live relay's message
 * (buildEntry: the same body, attributes and FIFO group) plus `replay=true`, or why it cannot be
 * sent. A FIFO topic deduplicates by `<run>:<event id>`, not the event id alone: SNS would drop a
 * replay within 5 minutes of the original, and a re-send of the same run after a kill is dropped.
 */
export function buildReplayEntry(
  row: ClaimedRow,
  resolveTopic: TopicResolver,
  limitFor: LimitResolver,
  runId: string,
  claimCheckSendWithinHours: number,
): BuiltEntry {
  const built = buildEntry(row, resolveTopic, limitFor, claimCheckSendWithinHours);
  if (built.kind !== "ready") return built;
  const attributes = { ...built.entry.attributes, [REPLAY_ATTRIBUTE]: "true" };
  if (Object.keys(attributes).length > MAX_MESSAGE_ATTRIBUTES) {
    return {
      kind: "unsendable",
      reason: `no room for the ${REPLAY_ATTRIBUTE} attribute: the event has ${MAX_MESSAGE_ATTRIBUTES} already`,
    };
  }
  const { bytes, problem } = measureMessage(built.entry.message, attributes, built.limitBytes);
  if (problem !== undefined)
    return { kind: "unsendable", reason: `with the ${REPLAY_ATTRIBUTE} attribute, ${problem}` };
  const deduplicationId = built.entry.deduplicationId === undefined ? undefined : `${runId}:${row.id}`;
  return { ...built, bytes, entry: { ...built.entry, attributes, deduplicationId } };
}
