import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import {
  CreateSecretCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from "@aws-sdk/client-secrets-manager";
import { type RunningMotoServer, startMotoServer } from "@outbox/devstack";
import {
  ConfigError,
  connectionBounds,
  createDatabase,
  type DatabaseHandle,
  newDatabaseClient,
  rotatingPassword,
  sleep,
} from "@outbox/shared";
import { capturingLogger, createTestDatabase, waitUntil } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// The SDK's default credential chain is what a daemon uses; moto takes any key.
const region = "us-east-1";
const role = `rotating_${randomBytes(4).toString("hex")}`;

let moto: RunningMotoServer;
let secrets: SecretsManagerClient;
let admin: DatabaseHandle;
let databaseUrl: string;

/** The test database's URL, as the rotating role with `password`. */
function roleUrl(password: string): string {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = password;
  return url.toString();
}

/** An RDS-managed secret's JSON for the role. */
function secretText(password: string): string {
  const url = new URL(databaseUrl);
  return JSON.stringify({
    engine: "postgres",
    username: role,
    password,
    host: url.hostname,
    port: Number(url.port),
    dbname: url.pathname.slice(1),
  });
}

beforeAll(async () => {
  vi.stubEnv("AWS_ACCESS_KEY_ID", "test");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "test");
  moto = await startMotoServer();
  secrets = new SecretsManagerClient({ region, endpoint: moto.endpoint });
  databaseUrl = await createTestDatabase("rotation");
  admin = createDatabase({
    url: databaseUrl,
    service: "rotation-admin",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await sql.raw(`CREATE ROLE ${role} LOGIN PASSWORD 'first-password'`).execute(admin.db);
  await sql.raw("CREATE TABLE load_rows (id integer PRIMARY KEY)").execute(admin.db);
  await sql.raw(`GRANT INSERT, SELECT ON load_rows TO ${role}`).execute(admin.db);
});

afterAll(async () => {
  await admin?.close(5_000);
  secrets?.destroy();
  await moto?.stop();
  vi.unstubAllEnvs();
});

/** Whether Postgres takes `password` for the role right now, on a pool of its own. */
async function accepts(password: string): Promise<boolean> {
  const probe = createDatabase({
    url: roleUrl(password),
    service: "rotation-probe",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  try {
    await probe.pool.query("SELECT 1");
    return true;
  } catch (error) {
    expect((error as { code?: unknown }).code).toBe("28P01");
    return false;
  } finally {
    await probe.close(5_000);
  }
}

describe("a database password rotated under load (DATABASE_SECRET_ARN)", () => {
  it("loses no write: only connections opened between the password change and the secret's fail, and the pool reconnects with the new password", async () => {
    const { ARN: secretArn } = await secrets.send(
      new CreateSecretCommand({ Name: `db-${role}`, SecretString: secretText("first-password") }),
    );
    if (secretArn === undefined) throw new Error("moto returned no ARN");
    const { log, lines } = capturingLogger();
    const password = rotatingPassword({
      secretArn,
      databaseUrl: roleUrl("first-password"),
      connectTimeoutMs: 4_000,
      log,
      endpoint: moto.endpoint,
    });
    const handle = createDatabase({
      url: roleUrl("first-password"),
      service: "rotation-load",
      poolMax: 4,
      // Connections are replaced every second, so the rotation reaches every one of them quickly.
      poolMaxLifetimeSeconds: 1,
      statementTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 10_000,
      password,
    });

    // Four writers, each retrying a write until it succeeds: what a relay or consumer does with a
    // batch or a message that failed. Every write that failed is counted with its error code.
    const failures: { code: unknown; afterSecretChanged: boolean; afterNewPasswordUsed: boolean }[] = [];
    let next = 0;
    let written = 0;
    let running = true;
    let secretChanged = false;
    let newPasswordUsed = false;
    const writer = async () => {
      while (running) {
        const id = next++;
        for (;;) {
          try {
            await handle.pool.query("INSERT INTO load_rows (id) VALUES ($1)", [id]);
            written++;
            break;
          } catch (error) {
            failures.push({
              code: (error as { code?: unknown }).code,
              afterSecretChanged: secretChanged,
              afterNewPasswordUsed: newPasswordUsed,
            });
            await sleep(20);
          }
        }
      }
    };
    const writers = Promise.all([writer(), writer(), writer(), writer()]);
    try {
      await waitUntil("writes on the first password", () => written >= 200, { timeoutMs: 20_000 });

      // RDS's single-user rotation: the database's password changes first, the secret after it.
      await sql.raw(`ALTER ROLE ${role} PASSWORD 'second-password'`).execute(admin.db);
      await waitUntil("a connection refused the old password", () => failures.length > 0, {
        timeoutMs: 20_000,
      });
      await secrets.send(
        new PutSecretValueCommand({ SecretId: secretArn, SecretString: secretText("second-password") }),
      );
      secretChanged = true;
      await waitUntil(
        "the pool to read the new password",
        () => lines.some((line) => line.msg?.startsWith("database password changed")),
        { timeoutMs: 20_000 },
      );
      newPasswordUsed = true;
      const { rows: now } = await admin.pool.query<{ at: Date }>("SELECT now() AS at");
      const writtenThen = written;
      await waitUntil(
        "every connection opened before the change replaced, and writes on the new ones",
        async () => {
          const { rows: old } = await admin.pool.query<{ count: string }>(
            "SELECT count(*) AS count FROM pg_stat_activity WHERE usename = $1 AND backend_start < $2",
            [role, now[0]?.at],
          );
          return Number(old[0]?.count) === 0 && written >= writtenThen + 200;
        },
        { timeoutMs: 30_000 },
      );
    } finally {
      running = false;
      await writers;
    }

    const { rows } = await handle.pool.query<{ count: string; max: number }>(
      "SELECT count(*) AS count, max(id) AS max FROM load_rows",
    );
    const backends = await admin.pool.query<{ count: string }>(
      "SELECT count(*) AS count FROM pg_stat_activity WHERE usename = $1",
      [role],
    );
    await handle.close(5_000);

    // 0 lost: every write the writers started is in the table, once.
    expect(Number(rows[0]?.count)).toBe(written);
    expect(rows[0]?.max).toBe(next - 1);
    expect(written).toBe(next);
    // The errors are the refused password and nothing else, and none after the pool had the new one.
    expect(failures.length).toBeGreaterThan(0);
    expect(new Set(failures.map((failure) => failure.code))).toEqual(new Set(["28P01"]));
    expect(failures.filter((failure) => failure.afterNewPasswordUsed)).toEqual([]);
    // The pool was still connected at the end, so it did reconnect: only the new password works now.
    expect(Number(backends.rows[0]?.count)).toBeGreaterThan(0);
    expect(await accepts("first-password")).toBe(false);
    expect(await accepts("second-password")).toBe(true);
  }, 120_000);

  it("connects with the password it has while Secrets Manager does not answer: the read gets half the connect timeout", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = silent.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const { log, lines } = capturingLogger();
    const connectTimeoutMs = 1_000;
    await sql.raw(`ALTER ROLE ${role} PASSWORD 'while-silent'`).execute(admin.db);
    const handle = createDatabase({
      url: roleUrl("while-silent"),
      service: "rotation-silent-secrets",
      poolMax: 1,
      connectTimeoutMs,
      statementTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 10_000,
      password: rotatingPassword({
        secretArn: `arn:aws:secretsmanager:${region}:123456789012:secret:db-${role}-silent`,
        databaseUrl: roleUrl("while-silent"),
        connectTimeoutMs,
        log,
        endpoint: `http://127.0.0.1:${port}`,
      }),
    });
    try {
      // The first connection waits for the read (it may be a fresh task's first), which gives up in
      // time for the connection to authenticate with DATABASE_URL's password inside its own timeout.
      const { rows } = await handle.pool.query<{ who: string }>("SELECT current_user AS who");
      expect(rows[0]?.who).toBe(role);
      expect(lines.map((line) => line.msg)).toEqual([
        "database secret not read: the last password stays in use",
      ]);
    } finally {
      await handle.close(5_000);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("refuses a DATABASE_SECRET_ARN that is not a Secrets Manager ARN, naming the variable", () => {
    const make = () =>
      rotatingPassword({
        secretArn: "arn:aws:s3:::bucket",
        databaseUrl: "postgres://user@localhost/db",
        connectTimeoutMs: 1_000,
        log: capturingLogger().log,
      });
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(/DATABASE_SECRET_ARN/);
  });
});

describe("a connection of its own (the relay's LISTEN) with a rotating password", () => {
  const listener = `listener_${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    await sql.raw(`CREATE ROLE ${listener} LOGIN PASSWORD 'listen-password'`).execute(admin.db);
  });

  /** A RotatingPassword that gives `password` and counts the refusals it is told of. */
  function fixedPassword(password: string) {
    const told = { refusals: 0 };
    return { told, password: { current: async () => password, refused: () => void told.refusals++ } };
  }

  /** A client for the listener role, its URL without a password: the rotating one is what it sends. */
  function listenClient(rotating: ReturnType<typeof fixedPassword>["password"]) {
    const url = new URL(databaseUrl);
    url.username = listener;
    url.password = "";
    return newDatabaseClient(
      { connectionString: url.toString(), ...connectionBounds({}), rotatingPassword: rotating },
      "listen-test",
    );
  }

  it("authenticates with the rotating password, and tells it when Postgres refuses it", async () => {
    const right = fixedPassword("listen-password");
    const client = listenClient(right.password);
    try {
      await client.connect();
      const { rows } = await client.query<{ who: string }>("SELECT current_user AS who");
      expect(rows[0]?.who).toBe(listener);
      expect(right.told.refusals).toBe(0);
    } finally {
      await client.end();
    }

    const wrong = fixedPassword("stale-password");
    const refused = listenClient(wrong.password);
    await expect(refused.connect()).rejects.toMatchObject({ code: "28P01" });
    expect(wrong.told.refusals).toBe(1);
    // The callback form, as pg-pool connects: the same refusal, told once more.
    const again = listenClient(wrong.password);
    const error = await new Promise<Error | null>((resolve) =>
      again.connect((failed: Error) => resolve(failed)),
    );
    expect(error).toMatchObject({ code: "28P01" });
    expect(wrong.told.refusals).toBe(2);
  });
});
