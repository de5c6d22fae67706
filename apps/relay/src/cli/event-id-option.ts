import { usageError } from "@outbox/shared/command-line";

/**
 * The `--id` of a command that acts on dead rows: absent (every row) or an event id (a UUID); anything
 * else is a usage error, which exits.
 */
export function eventIdOption(id: string | boolean | undefined, usage: string): string | undefined {
  if (id !== undefined && (typeof id !== "string" || !/^[0-9a-f-]{36}$/i.test(id))) {
    return usageError(usage, `--id needs an event id (a UUID), got "${String(id)}"`);
  }
  return id;
}
