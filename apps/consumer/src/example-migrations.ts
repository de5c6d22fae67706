// The example handlers' table (example-handlers.ts) comes from the demo's own migration set, kept
// out of the production list. The set lives in @outbox/shared, next to the migrate command that
// applies it (`pnpm migrate --demo`), which ships in the relay image.
export { EXAMPLE_MIGRATION_TABLE, exampleMigrations, migrateExampleTables } from "@outbox/shared";
