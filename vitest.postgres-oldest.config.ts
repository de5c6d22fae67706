import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The database-heavy core again on the oldest Postgres supported (13; README, "Set-up"), while
// `pnpm test` runs everything on the stack's default, 18: the migrations (kysely's and the plain SQL
// files), the claim and its plans, the relay, the consumer's transactions, the api, the console's
// read plans, the stop drill's rows. `pnpm test:postgres-oldest` sets POSTGRES_VERSION=13; CI runs
// it after the main suite (.ci/run), its results in the same closing line.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      "test/shared/postgres-version.test.ts",
      "test/shared/sql-migrations.test.ts",
      "test/shared/database.test.ts",
      "test/shared/deadline-transaction.test.ts",
      "test/shared/key-order.test.ts",
      "apps/relay/test/claim-plan.test.ts",
      "apps/relay/test/relay.test.ts",
      "apps/relay/test/delayed-events.test.ts",
      "apps/relay/test/wake-on-insert.test.ts",
      "apps/consumer/test/exactly-once.test.ts",
      "apps/consumer/test/handler-transaction.test.ts",
      "apps/api/test/photos.test.ts",
      "apps/api/test/idempotency.test.ts",
      "apps/console/test/read-plans.test.ts",
      "test/drills/stop-drill.test.ts",
    ],
  },
});
