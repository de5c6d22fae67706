export type { ClaimedRow } from "./claim-batch.js";
export { RELAY_METRICS } from "./metrics.js";
export type { BatchReport } from "./process-batch.js";
export {
  type FailedEntry,
  nullPublisher,
  type PublishEntry,
  type Publisher,
  type PublishRequest,
  type PublishResult,
} from "./publisher.js";
export {
  createRelay,
  type Relay,
  type RelayEvents,
  type RelayOptions,
  RelayOptionsError,
  type RelaySummary,
} from "./relay.js";
export type { RetentionOptions } from "./retention.js";
export { type RelayConfig, relaySettings, relayTimeouts } from "./settings.js";
export { createSnsPublisher } from "./sns-publisher.js";
