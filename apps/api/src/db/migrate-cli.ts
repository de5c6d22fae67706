import { runMigrateCommand } from "@outbox/shared";
import { migrateApiTables } from "./migrate.js";

// `pnpm migrate` of a checkout: the api sits above the shared command, so only here can `--api`
// name the photo service's set (packages never import apps).
process.exitCode = await runMigrateCommand("node dist/main.js migrate, in the api image", {
  api: {
    help: "then the photo service's own tables too (apps/api, tracked in photo_migration;\n           the api image applies them with `node dist/main.js migrate`)",
    apply: migrateApiTables,
  },
});
