/** What the live refresh needs of the page: whether it is hidden, and word when that changes. */
export interface RefreshedPage {
  readonly hidden: boolean;
  onVisibilityChange(listener: () => void): void;
}

/** The longest wait between refreshes after failures: the delay doubles from the period up to this. */
export const MAX_BACKOFF_MS = 60_000;

/**
 * The page's live refresh (page.ts). The next refresh is timed from the end of the last, so one is in
 * flight at most however slow the console answers; after a failure (`refresh` resolves false) the
 * delay doubles, up to MAX_BACKOFF_MS, and a success brings it back to the period. A hidden tab asks
 * nothing: it refreshes once when shown again, then every period. Apart from the page so that the
 * suite runs it on fake timers.
 */
export function liveRefresh(refresh: () => Promise<boolean>, periodMs: number, page: RefreshedPage): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight = false;
  let delayMs = periodMs;
  const schedule = () => {
    clearTimeout(timer);
    timer = page.hidden ? undefined : setTimeout(() => void tick(), delayMs);
  };
  const tick = async () => {
    if (inFlight || page.hidden) return;
    inFlight = true;
    let ok = false;
    try {
      ok = await refresh();
    } finally {
      delayMs = ok ? periodMs : Math.min(delayMs * 2, MAX_BACKOFF_MS);
      inFlight = false;
      schedule();
    }
  };
  page.onVisibilityChange(() => {
    if (page.hidden) clearTimeout(timer);
    else void tick();
  });
  schedule();
}
