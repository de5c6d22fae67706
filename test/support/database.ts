import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** Creates a fresh database on the run's Postgres server and returns its URL. */
export async function createTestDatabase(label: string): Promise<string> {
  const adminUrl = inject("postgresAdminUrl");
  const name = `t_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
