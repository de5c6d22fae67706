import { captureEarlyStopSignals } from "@outbox/shared/early-stop";

// The daemon takes over SIGTERM before loading anything heavy (Fastify, pg, kysely): a stop that
// arrives during start-up is then a clean stop with exit 0, not a kill by the default action.
if ((process.argv[2] ?? "run") === "run") captureEarlyStopSignals();
await import("./commands.js");
