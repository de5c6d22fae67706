import { runMigrateCommand } from "./migrate-command.js";

process.exitCode = await runMigrateCommand("node node_modules/@outbox/shared/dist/db/migrate-cli.js");
