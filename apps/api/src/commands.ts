import { daemonCommand, type Program } from "@outbox/shared/command-line";

// Only this table is loaded before a command runs (`api --help` answers at once); each command
// imports what it needs, the service after taking over SIGTERM (see daemonCommand).
export const apiProgram: Program = {
  name: "api",
  defaultCommand: "run",
  commands: {
    run: daemonCommand({
      summary: "serve the photo service until SIGTERM",
      docs: "docs/api.md",
      load: async () => (await import("./daemon.js")).runApiDaemon(),
    }),
    reconcile: {
      summary: "one pass of the gear link reconciliation job (a scheduled task), then exit",
      details: `
Links the pending gear links that are due, until none is left, and exits 0 (docs/api.md,
Reconciliation).`,
      settings: async () => (await import("./cli/reconcile.js")).reconcileSettings,
      async run() {
        return (await import("./cli/reconcile.js")).runReconcile();
      },
    },
    migrate: {
      summary: "apply the outbox's and the photo service's migrations, then exit",
      details: `
Applies every pending migration of the tables the service uses to DATABASE_URL and exits 0; 1 when
a migration fails.`,
      settings: async () => (await import("@outbox/shared")).migrateSettings,
      async run() {
        return (await import("./db/migrate.js")).runApiMigrate();
      },
    },
  },
};
