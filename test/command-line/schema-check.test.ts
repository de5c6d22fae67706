import { photoMigrations } from "@outbox/api";
import { migrations } from "@outbox/client";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { configRefusal, createTestDatabase, hangLimit } from "@outbox/test-kit";
import { beforeAll, describe, expect, it, vi } from "vitest";

// Its tests start up to 4 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 4 }) });

/**
 * Every daemon and one-shot command looks at the schema before it does anything: on a database that
 * lacks migrations it prints one line naming them and the command that applies them, and exits 78,
 * instead of a stack trace (`relation "outbox" does not exist`) or "batch failed" forever.
 */
describe("a database that lacks migrations", () => {
  let url: string;
  const names = Object.keys(migrations);
  const missing = (program: string) =>
    `${program}: the database lacks ${names.length} migrations, ${names[0]} to ${names.at(-1)}; apply them with \`pnpm migrate\` (in an image: node node_modules/@outbox/shared/dist/db/migrate-cli.js), then start again`;
  // The photo service needs its own set too, after the outbox's; its migrate command applies both.
  const apiNames = [...names, ...Object.keys(photoMigrations.migrations)];
  const missingForApi = (program: string) =>
    `${program}: the database lacks ${apiNames.length} migrations, ${apiNames[0]} to ${apiNames.at(-1)}; apply them with \`pnpm migrate --api\` (in an image: node dist/main.js migrate), then start again`;

  beforeAll(async () => {
    url = await createTestDatabase("unmigrated");
  });

  it("relay status and requeue-dead name the missing migrations and exit 78", async () => {
    const [status, requeue] = await Promise.all([
      configRefusal("apps/relay/src/main.ts", { DATABASE_URL: url }, ["status"]),
      configRefusal("apps/relay/src/main.ts", { DATABASE_URL: url }, ["requeue-dead"]),
    ]);
    expect(status).toEqual([missing("relay status")]);
    expect(requeue).toEqual([missing("relay requeue-dead")]);
  });

  it("the three daemons and api reconcile refuse to start the same way, the api naming its own set too", async () => {
    const [relay, consumer, api, reconcile] = await Promise.all([
      configRefusal("apps/relay/src/main.ts", {
        DATABASE_URL: url,
        RELAY_DEFAULT_TOPIC_ARN: "arn:aws:sns:us-east-1:000000000000:unused",
        OPS_PORT: "0",
      }),
      configRefusal("apps/consumer/src/main.ts", {
        DATABASE_URL: url,
        CONSUMER_QUEUE_URL: "http://127.0.0.1:1/000000000000/unused",
        CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
        OPS_PORT: "0",
      }),
      configRefusal("apps/api/src/main.ts", {
        DATABASE_URL: url,
        API_EQUIPMENT_URL: "http://127.0.0.1:1",
        API_PORT: "0",
        OPS_PORT: "0",
      }),
      configRefusal("apps/api/src/main.ts", { DATABASE_URL: url, API_EQUIPMENT_URL: "http://127.0.0.1:1" }, [
        "reconcile",
      ]),
    ]);
    expect(relay).toEqual([missing("relay")]);
    expect(consumer).toEqual([missing("consumer")]);
    expect(api).toEqual([missingForApi("api")]);
    expect(reconcile).toEqual([missingForApi("api reconcile")]);
  });
});
