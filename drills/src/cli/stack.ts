import { parseCommandLine, usageError } from "@outbox/shared/command-line";

const usage = `usage: pnpm stack [--no-migrate]

Starts the local stack in the foreground until SIGINT (Ctrl-C), SIGTERM or SIGHUP: Postgres, SQS
and SNS (the embedded backend, unless STACK=containers or STACK=auto picks LocalStack and Postgres
containers), a demo topic and queue, and the equipment service stub. Migrates the database (the
outbox and inbox tables, the photo service's and the demo's example_effects table), then prints on stdout the variables
the daemons read, as shell exports: source them in another shell and relay, consumer and api run
on the stack (pnpm --silent stack > stack.env, then . ./stack.env).

  --no-migrate  leave the database empty (the daemons then refuse to start, naming the migration)

Stopping it, or stopping the pnpm that launched it, stops every server it started and removes
their files. Exit 0 after a stop, 1 when the stack could not start.`;

const { values, positionals } = parseCommandLine(usage, { "no-migrate": { type: "boolean" } });
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

// Loaded after the command line: `--help` answers without starting anything.
const { runStack } = await import("../run-stack.js");
await runStack({ migrate: values["no-migrate"] !== true });
