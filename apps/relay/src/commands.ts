import { daemonCommand, type Program } from "@outbox/shared/command-line";

/** Spelled here (the table loads nothing heavy); settings.ts's REPUBLISH_DEFAULT_RATE is the value. */
const REPUBLISH_DEFAULT_RATE_TEXT = "100";

// Only this table is loaded before a command runs (`relay --help` answers at once); each command
// imports what it needs, the daemon after taking over SIGTERM (see daemonCommand).
export const relayProgram: Program = {
  name: "relay",
  defaultCommand: "run",
  commands: {
    run: daemonCommand({
      summary: "publish the outbox to SNS until SIGTERM",
      docs: "docs/relay.md",
      load: async () => (await import("./run-relay.js")).runRelay(),
    }),
    status: {
      synopsis: "[--json]",
      summary: "unsent and dead rows, blocked keys, oldest unsent age, per topic",
      details: `
  --json  one JSON object { total, topics, blockedKeys } instead of the tables
A blocked key is held by a dead row: its later events wait for requeue-dead or skip-dead.`,
      options: { json: { type: "boolean" } },
      settings: async () => (await import("./cli/open-database.js")).commandSettings,
      async run({ values }) {
        return (await import("./cli/status.js")).runStatus({ json: values.json === true });
      },
    },
    "requeue-dead": {
      synopsis: "[--id ID] [--include-skipped] [--out-of-order]",
      summary: "give dead rows (or one) a fresh set of attempts",
      details: `
  --id ID            only the dead row with this event id (a UUID); exit 1 when it was not requeued
  --include-skipped  every dead row includes the skipped ones (left out by default: skip-dead let
                     their keys go on without them)
  --out-of-order     requeue rows whose key already sent later events (they were skipped) too: each
                     goes out after those events. Without it such a row stays dead, named on stderr
                     with the later events
A requeued row goes out before its key's waiting events. A claim-checked row older than
RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS stays dead (its object may expire before a message is read),
named on stderr. Prints {"requeued":N}.`,
      options: {
        id: { type: "string" },
        "include-skipped": { type: "boolean" },
        "out-of-order": { type: "boolean" },
      },
      settings: async () => (await import("./settings.js")).requeueDeadSettings,
      async run({ values }, usage) {
        return (await import("./cli/requeue-dead.js")).runRequeueDead(
          {
            id: values.id,
            includeSkipped: values["include-skipped"] === true,
            outOfOrder: values["out-of-order"] === true,
          },
          usage,
        );
      },
    },
    "skip-dead": {
      synopsis: "[--id ID]",
      summary: "let dead rows (or one) stop holding their key",
      details: `
  --id ID  only the dead row with this event id (a UUID); exit 1 when none holds its key
The rows stay dead; their keys' later events go out without them. Prints {"skipped":N}.`,
      options: { id: { type: "string" } },
      settings: async () => (await import("./cli/open-database.js")).commandSettings,
      async run({ values }, usage) {
        return (await import("./cli/skip-dead.js")).runSkipDead(values.id, usage);
      },
    },
    republish: {
      synopsis: "--from TIME [--to TIME] [OPTIONS] | --resume RUN",
      summary: "re-send events already published in a time range, marked replay=true",
      details: `
  --from TIME   the range's start: rows published at or after it (ISO 8601 with its zone, e.g.
                2026-12-01T10:00:00Z)
  --to TIME     the range's end, excluded; by default the moment the run starts
  --topic T     only rows of this outbox topic
  --key K       only rows of this ordering key
  --rate N      events per second at most (default ${REPUBLISH_DEFAULT_RATE_TEXT}); a resume may change it
  --resume RUN  continue the run RUN (a UUID, printed when it started) where it stopped
  --inbox-retention-hours H
                the consumers' CONSUMER_INBOX_RETENTION_HOURS (the smallest): a range holding rows
                published longer ago is refused, since a consumer that has deleted their inbox rows
                would apply their effects again. Required, or:
  --allow-reapply
                send such rows anyway (their effects may apply twice; said on stderr)
One process works a run at a time: a second one (a --resume of a run still running) is refused,
exit 1. Reads published rows only and changes none: the live relay is not disturbed. Progress is kept in
relay_republish after each batch, so a run killed half-way resumes with no gap (at most one batch is
sent twice; the inbox makes those duplicates). Prints {"run":…,"sent":N,"skipped":N,"failed":N,
"finished":B}; exit 1 when it stopped early (resume it) or --resume names no run.`,
      options: {
        from: { type: "string" },
        to: { type: "string" },
        topic: { type: "string" },
        key: { type: "string" },
        rate: { type: "string" },
        resume: { type: "string" },
        "inbox-retention-hours": { type: "string" },
        "allow-reapply": { type: "boolean" },
      },
      settings: async () => (await import("./settings.js")).republishSettings,
      async run({ values }, usage) {
        const { parseRepublishOptions } = await import("./cli/republish-options.js");
        const request = parseRepublishOptions(values, usage);
        return (await import("./cli/republish.js")).runRepublish(request);
      },
    },
  },
};
