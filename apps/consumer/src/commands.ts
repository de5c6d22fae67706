import { daemonCommand, type Program } from "@outbox/shared/command-line";

// Only this table is loaded before the daemon runs (`consumer --help` answers at once); the daemon
// takes over SIGTERM before loading the AWS SDK, pg, kysely and the handlers (see daemonCommand),
// and exits the process itself.
export const consumerProgram: Program = {
  name: "consumer",
  defaultCommand: "run",
  commands: {
    run: daemonCommand({
      summary: "consume the SQS queue into the inbox until SIGTERM",
      docs: "docs/consumer.md; the handlers: CONSUMER_HANDLERS_MODULE",
      load: async () => (await import("./daemon.js")).runConsumerDaemon(),
    }),
  },
};
