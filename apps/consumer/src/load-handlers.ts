import path from "node:path";
import { pathToFileURL } from "node:url";
import type { HandlerSet } from "@outbox/client";

/** Resolves CONSUMER_HANDLERS_MODULE: a file URL, or a path relative to the working directory. */
export function handlersModuleUrl(modulePath: string): string {
  return modulePath.startsWith("file:") ? modulePath : pathToFileURL(path.resolve(modulePath)).href;
}

/**
 * The handler set the daemon runs: the default export of CONSUMER_HANDLERS_MODULE (required, checked
 * at start-up: see consumerStartChecks). The module's tables are not checked here: a handler writing
 * to a table that does not exist fails its messages, which then end in the DLQ.
 */
export async function loadHandlers<DB>(modulePath: string): Promise<HandlerSet<DB>> {
  const loaded: { default?: unknown } = await import(handlersModuleUrl(modulePath));
  if (!isHandlerSet(loaded.default)) {
    throw new Error(`${modulePath}: the default export must be a handler set made with defineHandlers()`);
  }
  // The database type is the module's promise; it cannot be checked at run time.
  return loaded.default as HandlerSet<DB>;
}

/** Whether `value` has a handler set's shape (any copy of @outbox/client makes the same). */
export function isHandlerSet(value: unknown): value is HandlerSet<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { find?: unknown }).find === "function" &&
    Array.isArray((value as { types?: unknown }).types)
  );
}
