import net from "node:net";
import {
  connectionFailureIn,
  connectionLayerFaultIn,
  createDatabase,
  isUniqueViolation,
} from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";

// What the consumer takes for a lost connection (and then probes the database over), from errors
// real pg clients threw: never a statement's own error.

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function databaseAt(url: string) {
  return createDatabase({
    url,
    service: "connection-failure-test",
    poolMax: 2,
    statementTimeoutMs: 1_000,
    connectTimeoutMs: 1_000,
    idleInTransactionTimeoutMs: 5_000,
  });
}

describe("connectionFailureIn", () => {
  it("finds a refused connection, through a wrapper's cause", async () => {
    const url = new URL(await createTestDatabase("connection_failure"));
    url.port = String(await closedPort());
    const database = databaseAt(url.toString());
    try {
      const error = await sql`SELECT 1`.execute(database.db).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(connectionFailureIn(error)).toMatchObject({ code: "ECONNREFUSED" });
      expect(connectionFailureIn(new Error("handler failed", { cause: error }))).toBe(error);
    } finally {
      await database.close(5_000);
    }
  });

  it("finds a server that ended the session (57P01), and not a constraint's violation or a cancel", async () => {
    const database = databaseAt(await createTestDatabase("connection_failure"));
    try {
      await sql`CREATE TABLE once (id int PRIMARY KEY)`.execute(database.db);
      await sql`INSERT INTO once VALUES (1)`.execute(database.db);
      const violation = await sql`INSERT INTO once VALUES (1)`.execute(database.db).catch((e: unknown) => e);
      expect(isUniqueViolation(violation)).toBe(true);
      expect(connectionFailureIn(violation)).toBeUndefined();
      const canceled = await sql`SELECT pg_sleep(5)`.execute(database.db).catch((e: unknown) => e);
      expect(connectionFailureIn(canceled)).toBeUndefined();
      const terminated = await sql`SELECT pg_terminate_backend(pg_backend_pid())`
        .execute(database.db)
        .catch((e: unknown) => e);
      expect(connectionFailureIn(terminated)).toBeDefined();
    } finally {
      await database.close(5_000);
    }
  });

  it("never throws, whatever a handler threw", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(connectionFailureIn(revoked.proxy)).toBeUndefined();
    expect(connectionFailureIn(Object.create(null))).toBeUndefined();
    expect(connectionFailureIn(new Error("wrapped", { cause: revoked.proxy }))).toBeUndefined();
  });
});

describe("connectionLayerFaultIn", () => {
  it("finds a prepared statement's clash and a pooler's error, never a socket code nor a statement's error", async () => {
    const url = await createTestDatabase("connection_layer");
    const database = databaseAt(url);
    const thrown = (text: string) =>
      sql
        .raw(text)
        .execute(database.db)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
    try {
      // Real errors from Postgres: a name it does not hold (what a transaction pooler causes).
      const missing = await thrown("EXECUTE outbox_not_prepared");
      expect(connectionLayerFaultIn(new Error("wrapped", { cause: missing }))).toMatchObject({
        code: "26000",
      });
      expect(connectionLayerFaultIn(await thrown("SELECT 1/0"))).toBeUndefined();
    } finally {
      await database.close(5_000);
    }
    // PgBouncer's own words come as Postgres errors of class 08; a socket code could be a handler's HTTP call.
    const pooler = Object.assign(new Error("server conn crashed?"), { code: "08P01", severity: "ERROR" });
    expect(connectionLayerFaultIn(pooler)).toBe(pooler);
    expect(
      connectionLayerFaultIn(Object.assign(new Error("refused"), { code: "ECONNREFUSED" })),
    ).toBeUndefined();
  });
});
