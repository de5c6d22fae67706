/**
 * Signal plumbing without `AbortSignal.any`: on Node 20 it keeps a listener on a long-lived parent for
 * every child ever made (nodejs/node#55351), so a daemon that links one signal per message leaks.
 * The link returns its own undo, and callers undo when the work ends.
 */

/** Calls `onAbort` with the reason when `parent` aborts (at once if it has). Returns the unlink function. */
export function onSignalAbort(parent: AbortSignal, onAbort: (reason: unknown) => void): () => void {
  if (parent.aborted) {
    onAbort(parent.reason);
    return () => {};
  }
  const listener = () => onAbort(parent.reason);
  parent.addEventListener("abort", listener, { once: true });
  return () => parent.removeEventListener("abort", listener);
}
