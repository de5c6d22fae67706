import { randomBytes } from "node:crypto";

/**
 * A topic/queue name no other test file uses: files share one stack and run in parallel.
 * Stays within SNS/SQS name rules (letters, digits, `-`, `_`; ≤ 80 with room for suffixes).
 */
export function uniqueName(prefix: string): string {
  const clean = prefix.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 50);
  return `${clean}-${randomBytes(5).toString("hex")}`;
}
