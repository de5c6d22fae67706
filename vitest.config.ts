import { configDefaults, defineConfig } from "vitest/config";
import LongFilesFirst from "./test/long-files-first.js";

// Workspace packages export their TypeScript sources under the "development" condition, so tests
// run the code as written, without a build step. ("module" is left out on purpose: it would load the
// AWS SDK's bundler-only dist-es build, whose extensionless imports Node cannot resolve.)
const conditions = ["development", "node"];

// The tests of the runner itself (test/exit-codes, test/command-line/test-run-cleanup) run this very
// configuration, global set-up included, on the one fixture file they name here.
const fixture = process.env.OUTBOX_TEST_FIXTURE;

// One local stack per run (test/global-setup.ts); each test file gets its own database and its own
// topic/queue names, so files run in parallel without seeing each other.
export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["development"] } },
  test: {
    include: fixture
      ? [fixture]
      : [
          "packages/*/test/**/*.test.ts",
          "apps/*/test/**/*.test.ts",
          "test/**/*.test.ts",
          "infra/test/**/*.test.ts",
          "bench/test/**/*.test.ts",
        ],
    // Waits of minutes (a timeout at its default value): vitest.slow.config.ts runs them, beside this.
    exclude: [...configDefaults.exclude, "**/*.slow.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // In each worker: it dies when the runner has gone (test/worker-setup.ts).
    setupFiles: ["test/worker-setup.ts"],
    testTimeout: 60_000,
    // A poll waits for what happens by itself (a row published, a message visible): its default is a
    // hang limit, not a pace a loaded machine must keep (vitest's own is 1 s). A poll that tells two
    // outcomes apart names its own timeout, below the other outcome's time.
    expect: { poll: { timeout: 20_000 } },
    hookTimeout: 120_000,
    pool: "forks",
    sequence: { sequencer: LongFilesFirst },
    // Vitest's default is one worker fewer than the cores: on a 2-core runner, one file at a time.
    // Most files wait (on a drain, a lease, a long poll, a child daemon), not compute: three at
    // once keep both cores busy and halve the run; each file's verdict must hold under that load.
    maxWorkers: 3,
  },
});
