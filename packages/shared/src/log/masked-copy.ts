import { thrownParts } from "@outbox/client/internal";
import { isPostgresDataField, isPostgresError, postgresTextWithoutData } from "../db/postgres-errors.js";
import { maskSecretsInText } from "./redaction.js";

// pino writes a field's value 5 levels deep and 100 entries wide (its depthLimit and edgeLimit) and
// nothing past that; the copy goes deeper than pino writes, so everything written has been masked.
const MAX_DEPTH = 10;
const MAX_ENTRIES = 100;
// Causes of causes: message and stack grow by one per level, so the chain is cut like a deep object.
const MAX_CAUSES = MAX_DEPTH;

const DEEPER = "[...]";
const CIRCULAR = "[Circular]";
const UNREADABLE = "[unreadable]";

/** The errors this module produced: serialized again (pino's `err` serializer after the formatter), they stay as they are. */
const serializedErrors = new WeakSet<object>();

function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

function property(value: object, key: PropertyKey): unknown {
  return attempt(() => (value as Record<PropertyKey, unknown>)[key], UNREADABLE);
}

/** As pino's serializer decides: an Error, or anything with a string `message`. */
function isErrorLike(value: object): boolean {
  return attempt(() => value instanceof Error, false) || typeof property(value, "message") === "string";
}

function errorCause(error: object): object | undefined {
  const cause = property(error, "cause");
  return typeof cause === "object" && cause !== null && isErrorLike(cause) ? cause : undefined;
}

/** The error's own text and its causes', as pino's serializer joins them (`outer: inner`, `…\ncaused by: …`). */
function withCauses(error: object, part: "message" | "stack"): string {
  const texts: string[] = [];
  const seen = new Set<object>();
  for (let current: object | undefined = error; current !== undefined; current = errorCause(current)) {
    if (seen.has(current) || seen.size === MAX_CAUSES) break;
    seen.add(current);
    const parts = thrownParts(current);
    const text = (part === "message" ? parts.message : parts.stack) ?? "";
    texts.push(
      postgresError(current) ? postgresTextWithoutData(String(property(current, "code")), text) : text,
    );
  }
  return maskSecretsInText(texts.join(part === "message" ? ": " : "\ncaused by: "));
}

function postgresError(error: object): boolean {
  return attempt(() => isPostgresError(error), false);
}

function errorType(error: object): string {
  const made = property(error, "constructor");
  const name = typeof made === "function" ? property(made, "name") : undefined;
  if (typeof name === "string" && name !== "") return name;
  return thrownParts(error).name ?? "Error";
}

/**
 * pino's error shape (`type`, `message` and `stack` with their causes, `aggregateErrors`, every
 * enumerable property), with secrets masked everywhere in it. A cause that is not an Error is kept
 * as `cause`. Reading the error never throws: a getter that throws is written as "[unreadable]".
 */
function serializeError(error: object, depth: number, ancestors: Set<object>): Record<string, unknown> {
  const serialized: Record<string, unknown> = {
    type: errorType(error),
    message: withCauses(error, "message"),
    stack: withCauses(error, "stack"),
  };
  const errors = property(error, "errors");
  if (Array.isArray(errors)) serialized.aggregateErrors = maskedCopyAt(errors, depth + 1, ancestors);
  const cause = property(error, "cause");
  if (cause !== undefined && errorCause(error) === undefined) {
    serialized.cause = maskedCopyAt(cause, depth + 1, ancestors);
  }
  const keys = attempt(() => {
    const found: string[] = [];
    for (const key in error) found.push(key);
    return found;
  }, []);
  // What Postgres said about the data (a unique violation's `detail` quotes the row's key) is personal
  // data as often as not: the SQLSTATE, the constraint and the table say what failed.
  const withheld = postgresError(error) ? isPostgresDataField : () => false;
  for (const key of keys.slice(0, MAX_ENTRIES)) {
    if (key in serialized || withheld(key)) continue;
    serialized[key] = maskedCopyAt(property(error, key), depth + 1, ancestors);
  }
  serializedErrors.add(serialized);
  return serialized;
}

function copyEntries(value: object, depth: number, ancestors: Set<object>): unknown {
  if (Array.isArray(value)) {
    const copy = value.slice(0, MAX_ENTRIES).map((entry) => maskedCopyAt(entry, depth + 1, ancestors));
    if (value.length > MAX_ENTRIES) copy.push(`… ${value.length - MAX_ENTRIES} more`);
    return copy;
  }
  const toJSON = property(value, "toJSON");
  if (typeof toJSON === "function") {
    return maskedCopyAt(
      attempt(() => toJSON.call(value), UNREADABLE),
      depth + 1,
      ancestors,
    );
  }
  const keys = Object.keys(value);
  const copy: Record<string, unknown> = {};
  for (const key of keys.slice(0, MAX_ENTRIES))
    copy[key] = maskedCopyAt(property(value, key), depth + 1, ancestors);
  if (keys.length > MAX_ENTRIES) copy["…"] = `${keys.length - MAX_ENTRIES} more`;
  return copy;
}

function maskedCopyAt(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (typeof value === "string") return maskSecretsInText(value);
  if (typeof value !== "object" || value === null) return value;
  if (serializedErrors.has(value)) return value;
  if (ancestors.has(value)) return CIRCULAR;
  if (depth >= MAX_DEPTH) return DEEPER;
  ancestors.add(value);
  try {
    return isErrorLike(value)
      ? serializeError(value, depth, ancestors)
      : copyEntries(value, depth, ancestors);
  } catch {
    // A Proxy that refuses to list its keys, or says it is an array and is revoked.
    return UNREADABLE;
  } finally {
    ancestors.delete(value);
  }
}

/**
 * A copy of a logged value as pino would write it, with `maskSecretsInText` applied to every string
 * in it however deep (up to pino's own depth and breadth limits): object fields, array entries, and
 * Errors — serialized in pino's shape, message, stack, causes and custom properties included.
 * Cycle-safe, and never throws on a hostile value.
 */
export function maskedCopy(value: unknown): unknown {
  return maskedCopyAt(value, 0, new Set());
}

/** `maskedCopy` of each field of a log line. */
export function maskedFields(fields: Record<string, unknown>): Record<string, unknown> {
  const masked: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) masked[key] = maskedCopy(fields[key]);
  return masked;
}
