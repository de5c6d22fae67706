/**
 * Limits for work that ends by itself: a compiler, a pack, an install, a synth, a program's start.
 * Each is there only to catch a hang, never to judge speed: several times the longest duration seen
 * on a loaded 2-core machine (the figure beside it; seen with seven other test runs beside the suite,
 * a load average of about 30, harsher than `pnpm test:under-load`). A test that runs such work takes
 * its timeout from here, never from the suite's default; when one is hit on a slow machine, raise it.
 */
export const HANG_LIMIT_MS = {
  /** One `tsc -p` of a scratch application, TypeScript 5 or 7: up to 25 s seen. */
  compile: 120_000,
  /** An offline install of packed tarballs into a scratch application: up to 40 s seen. */
  install: 180_000,
  /** The workspace's packages packed once for the run (`pnpm pack` of each): up to 90 s seen. */
  pack: 360_000,
  /** The daemons packaged as the Dockerfile does (infra/scripts/package-daemons.sh: a build and a `pnpm deploy` each): up to 270 s seen. */
  deploy: 900_000,
  /** `bin/app.ts` synthesizing the CDK stack in a process of its own: up to 45 s seen. */
  synth: 180_000,
  /** A vitest run of one fixture file in a process of its own, its global set-up starting the stack: up to 60 s seen. */
  testRun: 240_000,
  /** `pnpm drill <scenario> --quick`: its own stack, daemons and drill: up to 180 s seen. */
  drill: 600_000,
  /** A program started through tsx, to its exit or its first log line: up to 12 s seen. */
  processStart: 60_000,
} as const;

export type HangWork = keyof typeof HANG_LIMIT_MS;

/**
 * The timeout of a test that runs the given steps one after the other (`{ compile: 3 }`: three
 * compiler runs), plus `waitsMs` for the rest of its body (its own waits, each bounded already).
 */
export function hangLimit(steps: Partial<Record<HangWork, number>>, waitsMs = 30_000): number {
  let total = waitsMs;
  for (const [work, count] of Object.entries(steps) as [HangWork, number][]) {
    total += HANG_LIMIT_MS[work] * count;
  }
  return total;
}
