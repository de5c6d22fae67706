/**
 * `@outbox/client/internal`: what the relay, the consumer and their tools share — the outbox's locks
 * and channel, the SNS message contract and its measurements, the claim-check pointer format, the
 * migration runner. For the daemons, not for applications: no semver promise, any release may change
 * it. An application's names are in ./index.ts.
 */
export {
  claimCheckPointer,
  decodePointer,
  marksClaimCheck,
  PAYLOAD_SIZE_ATTRIBUTES,
  type PayloadPointer,
  pointerUri,
} from "./claim-check/payload-pointer.js";
export { isBatchHandler } from "./consumer/handlers.js";
export { runMigrator } from "./db/migration-set.js";
export { describeError, thrownParts } from "./log/describe-error.js";
export {
  isTopicMessageLimit,
  MAX_BATCH_ENTRIES,
  MAX_MESSAGE_ATTRIBUTES,
  MAX_MESSAGE_BYTES,
  MAX_TOPIC_MESSAGE_BYTES,
  MAX_VISIBILITY_SECONDS,
  MIN_TOPIC_MESSAGE_BYTES,
  REPLAY_ATTRIBUTE,
} from "./outbox/message-contract.js";
export { orderingKeyLock } from "./outbox/ordering-key-lock.js";
export {
  headersProblem,
  measureMessage,
  messageAttributes,
} from "./outbox/sns-message.js";
export {
  INSERT_IN_FLIGHT_LOCK,
  ORDERING_KEY_LOCK_SPACE,
  OUTBOX_CHANNEL,
  OUTBOX_LOCK_SPACE,
  RELAY_ASLEEP_LOCK,
} from "./protocol.js";
export { MessagingAttributes, MessagingSystem, OutboxAttributes } from "./telemetry/messaging-attributes.js";
