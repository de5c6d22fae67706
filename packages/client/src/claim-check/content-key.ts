import { createHash } from "node:crypto";

/**
 * The object key of a payload: the SHA-256 of its UTF-8 bytes, in hex, after `prefix`. Content
 * addressed, so an enqueue retried after its transaction rolled back writes the same object again
 * instead of a second one, and events with the same payload share it; nothing ever overwrites an
 * object with other bytes, which is what lets the consumer read it without a version check.
 */
export function contentKey(payloadJson: string, prefix = ""): string {
  return `${prefix}${createHash("sha256").update(payloadJson, "utf8").digest("hex")}`;
}
