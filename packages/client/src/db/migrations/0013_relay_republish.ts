import { type Kysely, sql } from "kysely";

/**
 * `relay republish` runs and how far each got, so a run killed half-way resumes where it stopped
 * (`relay republish --resume RUN`) instead of starting over or leaving a gap. A table of its own: the
 * run only reads the outbox's published rows, never writes them, so the live relay's claims, marks and
 * HOT updates are untouched.
 *
 * - The range is fixed when the run starts: rows published in [from_published, to_published), walked in
 *   (published_at, seq) order on the `outbox_published_at` index (seq has no index of its own since
 *   0009); a key's rows were published in seq order, so this keeps each key's order.
 * - `topic` and `ordering_key`: the optional filters, as given.
 * - The cursor (`cursor_published`, `cursor_seq`): every row of the range up to it has been sent. NULL
 *   before the first send. It moves after each page (≤ 10 rows) the bus took whole, so a kill re-sends
 *   at most one page (the inbox makes those duplicates) and skips none.
 * - `sent`, `skipped`: counts so far; `finished_at` once the range is done.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE relay_republish (
      id                uuid PRIMARY KEY,
      from_published    timestamptz NOT NULL,
      to_published      timestamptz NOT NULL,
      topic             text NULL,
      ordering_key      text NULL,
      rate              integer NOT NULL CHECK (rate > 0),
      cursor_published  timestamptz NULL,
      cursor_seq        bigint NULL,
      sent              bigint NOT NULL DEFAULT 0,
      skipped           bigint NOT NULL DEFAULT 0,
      started_at        timestamptz NOT NULL DEFAULT now(),
      updated_at        timestamptz NOT NULL DEFAULT now(),
      finished_at       timestamptz NULL,
      CHECK (from_published < to_published),
      CHECK ((cursor_published IS NULL) = (cursor_seq IS NULL))
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE relay_republish`.execute(db);
}
