import { createHash } from "node:crypto";

/**
 * The advisory lock number of an ordering key, as the outbox's insert trigger computes it (migration
 * 0014: `('x' || left(md5(ordering_key), 8))::bit(32)::int`, the first 32 bits of the key's MD5 read as
 * a signed int4). Two keys may share a number; they then merely take turns.
 */
export function orderingKeyLock(orderingKey: string): number {
  return Number.parseInt(createHash("md5").update(orderingKey, "utf8").digest("hex").slice(0, 8), 16) | 0;
}

/**
 * The rows in the order their key locks must be taken: keyed rows by ascending lock number, so that two
 * transactions enqueuing overlapping sets of keys in one statement each take their locks in the same
 * order and never wait for each other in a cycle. Rows sharing a lock number keep their given order (a
 * key's events are sequenced as they were given); unkeyed rows take no lock and go first, as given.
 */
export function inKeyLockOrder<Row extends { readonly ordering_key?: string | null }>(
  rows: readonly Row[],
): Row[] {
  const locked = rows.map((row) => ({
    row,
    lock: row.ordering_key == null ? Number.NEGATIVE_INFINITY : orderingKeyLock(row.ordering_key),
  }));
  // Array.prototype.sort is stable.
  locked.sort((a, b) => (a.lock < b.lock ? -1 : a.lock > b.lock ? 1 : 0));
  return locked.map(({ row }) => row);
}
