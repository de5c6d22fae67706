import type { ClaimedRow } from "./claim-batch.js";

/**
 * Splits a claimed batch (in seq order) into waves: wave n holds the n-th row of every ordering key,
 * and unkeyed rows all go in wave 0. Waves are published one after the other, so a key's rows are
 * never in flight together and each is sent only after the one before it was accepted; the rows of
 * one wave share no key and can go out in parallel.
 */
export function planWaves(rows: readonly ClaimedRow[]): ClaimedRow[][] {
  const waves: ClaimedRow[][] = [];
  const seen = new Map<string, number>();
  for (const row of rows) {
    let wave = 0;
    if (row.orderingKey !== null) {
      wave = seen.get(row.orderingKey) ?? 0;
      seen.set(row.orderingKey, wave + 1);
    }
    const members = waves[wave];
    if (members) members.push(row);
    else waves[wave] = [row];
  }
  return waves;
}
