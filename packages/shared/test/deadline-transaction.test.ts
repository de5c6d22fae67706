import { createMigratedTestDatabase } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, Deadline, DeadlineExceededError, deadlineTransaction } from "../src/index.js";

let handle: DatabaseHandle;
beforeAll(async () => {
  ({ handle } = await createMigratedTestDatabase("deadline_trx", { service: "shared-test", poolMax: 2 }));
});
afterAll(() => handle.close(5_000));

describe("deadlineTransaction", () => {
  it("bounds its statements by the time left instead of the pool's 5 s", async () => {
    const deadline = Deadline.after(800);
    const shown = await deadlineTransaction(handle.db, deadline, async (trx) => {
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

  it("has Postgres cancel a statement that outlives the deadline, and rolls back", async () => {
    const deadline = Deadline.after(300);
    await expect(
      deadlineTransaction(handle.db, deadline, async (trx) => {
        await trx
          .insertInto("photos")
          .values({ id: "0190c2a4-0000-7000-8000-0000000000aa", title: "x" })
          .execute();
        await sql`SELECT pg_sleep(5)`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: "57014" });
    const photos = await handle.db.selectFrom("photos").selectAll().execute();
    expect(photos).toEqual([]);
    deadline.dispose();
  });

  it("opens nothing when no time is left", async () => {
    const deadline = Deadline.after(0);
    let ran = false;
    await expect(
      deadlineTransaction(handle.db, deadline, async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(ran).toBe(false);
  });
});
