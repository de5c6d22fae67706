/**
 * Signal plumbing without `AbortSignal.any`: on Node 20 it keeps a listener on a long-lived parent for
 * every child ever made (nodejs/node#55351), so a daemon that links one signal per message leaks.
 * The link returns its own undo, and callers undo when the work ends.
 */

/** Aborts `child` when `parent` aborts. Returns the unlink function. */
export function forwardAbort(parent: AbortSignal, child: AbortController): () => void {
  if (parent.aborted) {
    child.abort(parent.reason);
    return () => {};
  }
  const onAbort = () => child.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return () => parent.removeEventListener("abort", onAbort);
}
