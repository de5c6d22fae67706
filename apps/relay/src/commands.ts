import { daemonCommand, type Program } from "@outbox/shared/command-line";

// Only this table is loaded before a command runs (`relay --help` answers at once); each command
// imports what it needs, the daemon after taking over SIGTERM (see daemonCommand).
export const relayProgram: Program = {
  name: "relay",
  defaultCommand: "run",
  commands: {
    run: daemonCommand({
      summary: "publish the outbox to SNS until SIGTERM",
      docs: "docs/relay.md",
      load: async () => (await import("./daemon.js")).runRelayDaemon(),
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
      synopsis: "[--id ID]",
      summary: "give dead rows (or one) a fresh set of attempts",
      details: `
  --id ID  only the dead row with this event id (a UUID); exit 1 when there is none
Prints {"requeued":N}.`,
      options: { id: { type: "string" } },
      settings: async () => (await import("./cli/open-database.js")).commandSettings,
      async run({ values }, usage) {
        return (await import("./cli/requeue-dead.js")).runRequeueDead(values.id, usage);
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
  },
};
