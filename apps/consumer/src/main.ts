import { captureEarlyStopSignals } from "@outbox/shared/early-stop";

// The daemon takes over SIGTERM before loading anything heavy (AWS SDK, pg, kysely, the handlers):
// a stop that arrives during start-up is then a clean stop with exit 0, not a kill.
captureEarlyStopSignals();
await import("./daemon.js");
