import { daemonCommand, type Program } from "@outbox/shared/command-line";

// Only this table is loaded before the daemon runs (`consumer --help` answers at once); the daemon
// takes over SIGTERM before loading the AWS SDK, pg, kysely and the handlers (see daemonCommand).
export const consumerProgram: Program = {
  name: "consumer",
  defaultCommand: "run",
  commands: {
    run: daemonCommand({
      summary: "consume the SQS queue into the inbox until SIGTERM",
      docs: "docs/consumer.md; the handlers: CONSUMER_HANDLERS_MODULE",
      // The module runs the daemon, which exits the process itself.
      load: () => import("./daemon.js"),
    }),
  },
};
