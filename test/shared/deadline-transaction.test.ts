import { Deadline, DeadlineExceededError } from "@outbox/client";
import {
  type DatabaseHandle,
  deadlineTransaction,
  TransactionEscapedError,
  TransactionFinishedError,
} from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let handle: DatabaseHandle;
beforeAll(async () => {
  ({ handle } = await createMigratedTestDatabase("deadline_trx", { service: "shared-test", poolMax: 2 }));
  // A business table of the test's own: the photo service's tables are that service's (apps/api).
  await sql`CREATE TABLE photos (id uuid PRIMARY KEY, title text NOT NULL)`.execute(handle.db);
});
type Business = { photos: { id: string; title: string } };
afterAll(() => handle.close(5_000));

describe("deadlineTransaction", () => {
  it("bounds its statements by the time left instead of the pool's 5 s", async () => {
    const deadline = Deadline.after(800);
    const shown = await deadlineTransaction(handle.pool, deadline, async (trx) => {
      const { rows } = await sql<{ ms: string }>`SELECT current_setting('statement_timeout') AS ms`.execute(
        trx,
      );
      return rows[0]?.ms;
    });
    expect(Number.parseInt(shown ?? "", 10)).toBeLessThanOrEqual(800);
    expect(Number.parseInt(shown ?? "", 10)).toBeGreaterThan(0);
    // The pool's own limit is back for the next transaction on that connection.
    const { rows } = await sql<{ ms: string }>`SELECT current_setting('statement_timeout') AS ms`.execute(
      handle.db,
    );
    expect(rows[0]?.ms).toBe("5s");
    deadline.dispose();
  });

  it("gives up on a statement that outlives the deadline at the deadline, rolls back, and never reuses its connection", async () => {
    const deadline = Deadline.after(300);
    let abandonedPid: number | undefined;
    await expect(
      deadlineTransaction<void, Business>(handle.pool, deadline, async (trx) => {
        await trx
          .insertInto("photos")
          .values({ id: "0190c2a4-0000-7000-8000-0000000000aa", title: "x" })
          .execute();
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        abandonedPid = rows[0]?.pid;
        await sql`SELECT pg_sleep(5)`.execute(trx);
      }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    const photos = await handle.db.withTables<Business>().selectFrom("photos").selectAll().execute();
    expect(photos).toEqual([]);
    // Every client the pool holds now (poolMax 2, both checked out at once) is another connection.
    const clients = await Promise.all([handle.pool.connect(), handle.pool.connect()]);
    const pids = await Promise.all(
      clients.map(
        async (client) =>
          (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid,
      ),
    );
    for (const client of clients) client.release();
    expect(abandonedPid).toBeDefined();
    expect(pids).not.toContain(abandonedPid);
    deadline.dispose();
  });

  it("opens nothing when no time is left", async () => {
    const deadline = Deadline.after(0);
    let ran = false;
    await expect(
      deadlineTransaction(handle.pool, deadline, async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(ran).toBe(false);
  });

  it("refuses the work's statements once the deadline ended the transaction: nothing is written outside it", async () => {
    const deadline = Deadline.after(200);
    let late: Promise<unknown> | undefined;
    let wokeUp: () => void = () => {};
    const woke = new Promise<void>((resolve) => {
      wokeUp = resolve;
    });
    await expect(
      deadlineTransaction<void, Business>(handle.pool, deadline, async (trx) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        late = trx
          .insertInto("photos")
          .values({ id: "0190c2a4-0000-7000-8000-0000000000bb", title: "late" })
          .execute();
        wokeUp();
      }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    await woke;
    await expect(late).rejects.toBeInstanceOf(TransactionFinishedError);
    expect(await handle.db.withTables<Business>().selectFrom("photos").selectAll().execute()).toEqual([]);
    deadline.dispose();
  });

  it("never commits a transaction its work ended, nor one whose failed statement it caught", async () => {
    const deadline = Deadline.after(5_000);
    await expect(
      deadlineTransaction<void, Business>(handle.pool, deadline, async (trx) => {
        await trx
          .insertInto("photos")
          .values({ id: "0190c2a4-0000-7000-8000-0000000000cc", title: "x" })
          .execute();
        await sql.raw("SELECT 1; COMMIT; BEGIN").execute(trx);
      }),
    ).rejects.toBeInstanceOf(TransactionEscapedError);
    await sql`DELETE FROM photos`.execute(handle.db);
    await expect(
      deadlineTransaction<void, Business>(handle.pool, deadline, async (trx) => {
        await trx
          .insertInto("photos")
          .values({ id: "0190c2a4-0000-7000-8000-0000000000dd", title: "y" })
          .execute();
        await sql`SELECT 1 / 0`.execute(trx).catch(() => undefined);
      }),
    ).rejects.toThrow(/nothing was written/);
    expect(await handle.db.withTables<Business>().selectFrom("photos").selectAll().execute()).toEqual([]);
    deadline.dispose();
  });
});
