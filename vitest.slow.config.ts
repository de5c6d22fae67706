import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The tests that wait for a timeout at its default value (minutes: the pool's 300 s connection
// lifetime, the keep-alive's 65 s), files named *.slow.test.ts. `pnpm test:slow` runs them; CI starts
// them before `pnpm test` and waits for them after it (.ci/run). They mostly sleep, so every file
// runs at once, on a stack of their own (test/global-setup.ts), beside the main suite's.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["**/test/**/*.slow.test.ts"],
    exclude: configDefaults.exclude,
    // The longest test is the pool's lifetime (300 s) with its margin.
    testTimeout: 400_000,
    fileParallelism: true,
    minWorkers: 4,
    maxWorkers: 4,
  },
});
