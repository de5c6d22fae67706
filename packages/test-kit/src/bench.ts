// For the benchmarks, `pnpm bench` and the per-package scripts alike: the same data to start from
// and the same way to measure it.
export * from "./bench/fixtures.js";
export * from "./bench/measure.js";
