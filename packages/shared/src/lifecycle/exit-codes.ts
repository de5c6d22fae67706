// How every process of ours ends, in one place: platforms and tests read these numbers.
export const EXIT_OK = 0;
/**
 * Any failure without a code of its own below: a crash, a failed migration, a failed drill check,
 * `relay requeue-dead --id` finding no such dead event.
 */
export const EXIT_CRASH = 1;
/** sysexits' EX_USAGE: a wrong command line; the usage goes to stderr. */
export const EXIT_USAGE = 64;
/** sysexits' EX_CONFIG: the platform should not restart-loop on it as if it were a crash. */
export const EXIT_CONFIG = 78;
/** 128 + SIGINT: a second stop request (Ctrl-C twice) ends the process at once. */
export const EXIT_FORCED = 130;
