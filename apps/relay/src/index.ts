export type { SettingsInCode } from "@outbox/shared";
export type { BatchReport } from "./batch.js";
export { RelayOptionsError } from "./errors.js";
export { RELAY_METRICS } from "./metrics.js";
export type { ClaimedRow } from "./outbox-store.js";
export { createRelay, type Relay, type RelayEvents, type RelaySummary } from "./relay.js";
export type { RelayOptions } from "./relay-options.js";
export type { RetentionOptions } from "./retention.js";
export { type RunRelayOptions, runRelay } from "./run-relay.js";
export { type RelayConfig, relaySettings, relayTimeouts } from "./settings.js";
export {
  createSnsPublisher,
  type FailedEntry,
  nullPublisher,
  type PublishEntry,
  type Publisher,
  type PublishRequest,
  type PublishResult,
} from "./sns/publisher.js";
