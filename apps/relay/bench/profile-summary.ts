/**
 * Top self-time functions of `.cpuprofile` files (from `node --cpu-prof`, e.g. BENCH_CPU_PROF=dir).
 *
 *   pnpm exec tsx apps/relay/bench/profile-summary.ts dir-or-file… [--top 30]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 30;
const paths = args.filter((_, i) => i !== topAt && i !== topAt + 1);
const files = paths.flatMap((path) =>
  statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => join(path, f))
    : [path],
);
const self = new Map<string, number>();
let total = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[index] ?? 0;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      .replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "")
      .replace(/^file:\/\/\/work\/main\//, "");
    const key = `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + delta);
    total += delta;
  });
}
const idle = ["(idle)", "(program)", "(garbage collector)"];
const busy = [...self].filter(([key]) => !idle.some((i) => key.startsWith(i))).reduce((s, [, v]) => s + v, 0);
console.log(
  `${files.length} profile(s), ${(total / 1e3).toFixed(0)} ms sampled, ${(busy / 1e3).toFixed(0)} ms busy`,
);
for (const [key, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(
    `${(micros / 1e3).toFixed(1).padStart(9)} ms ${((micros / total) * 100).toFixed(1).padStart(5)}%  ${key}`,
  );
}
