import type { Migration } from "kysely";
import * as outboxAndInbox from "./0001_outbox_and_inbox.js";

/**
 * Every migration, in order. Listed statically (not read from a folder) so a bundled or deployed
 * build carries them. Applied migrations are never edited: add a new file.
 */
export const migrations: Record<string, Migration> = {
  "0001_outbox_and_inbox": outboxAndInbox,
};
