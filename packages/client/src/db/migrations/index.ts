import type { Migration } from "../kysely-migrator.js";
import * as outboxAndInbox from "./0001_outbox_and_inbox.js";
import * as relayPendingByKey from "./0002_relay_pending_by_key.js";
import * as consumerExampleEffects from "./0003_consumer_example_effects.js";
import * as relayHotClaims from "./0004_relay_hot_claims.js";
import * as outboxPayloadVerbatim from "./0006_outbox_payload_verbatim.js";
import * as notifySleepingRelays from "./0007_notify_sleeping_relays.js";
import * as dropExampleEffects from "./0008_drop_example_effects.js";
import * as outboxSeqNotIndexed from "./0009_outbox_seq_not_indexed.js";
import * as relayDeadHeadsBlockKeys from "./0010_relay_dead_heads_block_keys.js";
import * as outboxDeliverAt from "./0012_outbox_deliver_at.js";
import * as relayRepublish from "./0013_relay_republish.js";
import * as outboxKeyOrder from "./0014_outbox_key_order.js";
import * as outboxOperatorReads from "./0015_outbox_operator_reads.js";

/**
 * Every outbox/inbox migration, in order. Listed statically (not read from a folder) so a bundled or
 * deployed build carries them. Applied migrations are never edited: add a new file. The numbers skip
 * 0005 and 0011: those were the photo service's, which moved to its own set (apps/api/src/db/migrations)
 * under the same names, so a database that applied them knows them in their new home.
 */
export const migrations: Record<string, Migration> = {
  "0001_outbox_and_inbox": outboxAndInbox,
  "0002_relay_pending_by_key": relayPendingByKey,
  "0003_consumer_example_effects": consumerExampleEffects,
  "0004_relay_hot_claims": relayHotClaims,
  "0006_outbox_payload_verbatim": outboxPayloadVerbatim,
  "0007_notify_sleeping_relays": notifySleepingRelays,
  // 0003 created the demo's example_effects; 0008 drops it (the demo has its own migrations).
  "0008_drop_example_effects": dropExampleEffects,
  "0009_outbox_seq_not_indexed": outboxSeqNotIndexed,
  "0010_relay_dead_heads_block_keys": relayDeadHeadsBlockKeys,
  "0012_outbox_deliver_at": outboxDeliverAt,
  "0013_relay_republish": relayRepublish,
  "0014_outbox_key_order": outboxKeyOrder,
  "0015_outbox_operator_reads": outboxOperatorReads,
};
