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
 * The rows in the order their key locks must be taken: the keyed rows by ascending lock number, so
 * that two transactions enqueuing overlapping sets of keys in one statement each take their locks in
 * the same order and never wait for each other in a cycle. Rows sharing a lock number keep their
 * given order (a key's events are sequenced as they were given), and so do unkeyed rows, each in its
 * place; a call with at most one key is written exactly as given.
 */
export function inKeyLockOrder<Row extends { readonly ordering_key?: string | null }>(
  rows: readonly Row[],
): Row[] {
  if (new Set(rows.map((row) => row.ordering_key ?? null).filter((key) => key !== null)).size <= 1) {
    return [...rows];
  }
  const keyed = rows
    .filter((row) => row.ordering_key != null)
    .map((row) => ({ row, lock: orderingKeyLock(row.ordering_key as string) }));
  // Array.prototype.sort is stable.
  keyed.sort((a, b) => a.lock - b.lock);
  let next = 0;
  return rows.map((row) => (row.ordering_key == null ? row : (keyed[next++]?.row ?? row)));
}
