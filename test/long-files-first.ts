import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take a minute or more (CI's run of 2026-12-08 on 2 cores, longest first). Vitest
 * starts first the files it remembers as slow, but a fresh clone remembers nothing, and these ran
 * last: the run's final three minutes were one of them alone. Started first, they overlap the rest.
 * A file missing here only runs later; a name gone from the tree is skipped.
 */
const LONG_FILES = [
  "test/drills/http-drills.test.ts",
  "bench/test/bench-smoke.test.ts",
  "test/packaging/client-package.test.ts",
  "test/drills/restart-series.test.ts",
  "apps/consumer/test/dead-letters.test.ts",
  "test/packaging/schema-shapes.test.ts",
  "test/drills/failover-drill.test.ts",
  "test/telemetry/liveness.test.ts",
  "test/telemetry/tracing.test.ts",
  "apps/relay/test/daemon.test.ts",
  "test/command-line/conventions.test.ts",
  "apps/relay/test/bus-faults.test.ts",
  "test/exit-codes/exit-codes.test.ts",
];

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONG_FILES.findIndex((name) => file.moduleId.endsWith(`/${name}`));
      return at === -1 ? LONG_FILES.length : at;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((file, order) => ({ file, order, rank: rank(file) }))
      .sort((a, b) => a.rank - b.rank || a.order - b.order)
      .map(({ file }) => file);
  }
}
