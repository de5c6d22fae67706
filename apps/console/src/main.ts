#!/usr/bin/env node
// `outbox-console` (the package's bin, dist/main.js) and `pnpm console` (this file, with tsx's loader in
// the same process: no tsx child that a signal would have to reach).
import { parseCommandLine, settingsUsage, usageError } from "@outbox/shared/command-line";
import { captureEarlyStopSignals } from "@outbox/shared/early-stop";

// A stop that arrives while the SDK and the server load is a clean stop, not a kill.
captureEarlyStopSignals();
const { consoleSettings } = await import("./settings.js");

const usage = `usage: pnpm console [--read-only]

The operator console: where events are stuck and why (the relay's backlog per topic, blocked keys,
dead rows, dead letters, republish runs), refreshing itself, with the commands' fixes (requeue, skip,
redrive, republish), each previewed, confirmed and logged. Serves http://CONSOLE_HOST:CONSOLE_PORT/ until
SIGTERM or Ctrl-C. Off loopback it needs CONSOLE_TOKEN, given by the browser as basic auth's password.
See docs/console.md.

  --read-only  show everything, offer no action (as CONSOLE_READ_ONLY=true)

${settingsUsage(consoleSettings)}
Exit 0 after SIGTERM or Ctrl-C; 64 for a wrong command line; 78 for invalid configuration or a
database without its migrations; 1 when it cannot listen or crashes.`;

const { values, positionals } = parseCommandLine(usage, { "read-only": { type: "boolean" } });
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

const { runConsole } = await import("./run-console.js");
process.exit(await runConsole({ readOnly: values["read-only"] === true }));
