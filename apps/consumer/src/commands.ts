import { daemonCommand, type Program } from "@outbox/shared/command-line";

// Only this table is loaded before the daemon runs (`consumer --help` answers at once); the daemon
// takes over SIGTERM before loading the AWS SDK, pg, kysely and the handlers (see daemonCommand),
// and exits the process itself. Each one-shot command imports what it needs.
export const consumerProgram: Program = {
  name: "consumer",
  defaultCommand: "run",
  commands: {
    run: daemonCommand({
      summary: "consume the SQS queue into the inbox until SIGTERM",
      docs: "docs/consumer.md; the handlers: CONSUMER_HANDLERS_MODULE",
      load: async () => (await import("./run-consumer.js")).runConsumer(),
    }),
    dlq: {
      commands: {
        list: {
          synopsis: "[--json]",
          summary: "the DLQ's messages: event id and type, why, attempts, age; consumes nothing",
          details: `
  --json  one JSON object { total, messages } instead of the table
Every message received is released at once at the end (visibility 0): the list takes nothing away.
SIGTERM or Ctrl-C ends it early, released all the same (exit 1, the list partial).
A message without a reason was moved by the queue's redrive policy (its handler kept failing).`,
          options: { json: { type: "boolean" } },
          settings: async () => (await import("./cli/open-queues.js")).commandSettings,
          async run({ values }) {
            return (await import("./cli/dlq-list.js")).runDlqList({ json: values.json === true });
          },
        },
      },
    },
    redrive: {
      synopsis: "[FILTERS] [--dry-run]",
      summary: "move DLQ messages (all, or those matching) back to the consumer's queue",
      details: `
FILTERS, all that are given must match (none: every message):
  --id ID[,ID…]       only these messages: event ids or DLQ message ids; exit 1 when none matches
  --event-type TYPE   only messages of this event type
  --older-than D      only messages in the DLQ at least this long (5, 2.5s, 500ms; a number: seconds)
  --newer-than D      only messages in the DLQ less than this long
  --dry-run           print each message it would move ({"wouldMove":…}), move nothing
Each message is sent to the queue first, then deleted from the DLQ: a kill in between leaves a copy in
both, which the inbox makes a duplicate. What does not match is released at once at the end.
Prints {"received":N,"matched":N,"moved":N,"skipped":N,"failed":N,"undeleted":N,"dryRun":B};
exit 1 when a send failed, SQS failed as a whole, or SIGTERM/Ctrl-C stopped it after its batch in hand.`,
      options: {
        id: { type: "string" },
        "event-type": { type: "string" },
        "older-than": { type: "string" },
        "newer-than": { type: "string" },
        "dry-run": { type: "boolean" },
      },
      settings: async () => (await import("./cli/open-queues.js")).commandSettings,
      async run({ values }, usage) {
        const { parseRedriveFilter } = await import("./cli/redrive-filter.js");
        const filter = parseRedriveFilter(values, usage);
        return (await import("./cli/redrive.js")).runRedrive({ filter, dryRun: values["dry-run"] === true });
      },
    },
  },
};
