/**
 * Self time of `.cpuprofile` files (from `node --cpu-prof`, or BENCH_CPU_PROF=dir): by package
 * (node_modules/<pkg>, node: internals, ours by workspace package); by package again with native and
 * node: frames charged to the nearest package frame above them (a socket write pg makes is pg's, not
 * "native"); then the top functions.
 *
 *   pnpm exec tsx bench/tools/profile-summary.ts dir-or-file… [--top 30]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = ["(idle)", "(program)", "(garbage collector)"];
const REPO = new URL("../../", import.meta.url).href;

function where(url: string): string {
  return url.replace(/^.*node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, "").replace(REPO, "");
}

function packageOf(url: string): string {
  if (url === "") return "(native/gc/idle)";
  const dependency = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency?.[1]) return dependency[1];
  if (url.startsWith("node:")) return "node:internal";
  const ours = /^((?:apps|packages)\/[^/]+|bench|test)\//.exec(url.replace(REPO, ""));
  return ours?.[1] ?? url;
}

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 30;
const paths = args.filter((_, i) => topAt < 0 || (i !== topAt && i !== topAt + 1));
if (paths.length === 0) throw new Error("usage: profile-summary.ts dir-or-file… [--top 30]");
const files = paths.flatMap((path) =>
  statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => join(path, f))
    : [path],
);
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
const byCaller = new Map<string, number>();
let total = 0;
let idle = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  /** The package of the nearest frame from `id` up that has one; idle, GC and bare event-loop work keep their own name. */
  const caller = (id: number, leaf: ProfileNode): string => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const url = byId.get(at)?.callFrame.url ?? "";
      if (url !== "" && !url.startsWith("node:")) return packageOf(url);
    }
    return IDLE.includes(leaf.callFrame.functionName)
      ? leaf.callFrame.functionName
      : "(node runtime, no package on the stack)";
  };
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[index] ?? 0;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || "(anonymous)"} ${where(url)}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + delta);
    const group = IDLE.includes(functionName) ? functionName : packageOf(url);
    byPackage.set(group, (byPackage.get(group) ?? 0) + delta);
    const charged = caller(id, node);
    byCaller.set(charged, (byCaller.get(charged) ?? 0) + delta);
    total += delta;
    if (IDLE.includes(functionName)) idle += delta;
  });
}
const line = (micros: number, name: string) =>
  `${(micros / 1e3).toFixed(1).padStart(9)} ms ${((micros / total) * 100).toFixed(1).padStart(5)}%  ${name}`;
console.log(
  `${files.length} profile(s), ${(total / 1e3).toFixed(0)} ms sampled, ${((total - idle) / 1e3).toFixed(0)} ms busy`,
);
for (const [name, micros] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(line(micros, name));
console.log("--- native and node: frames charged to the nearest package above them");
for (const [name, micros] of [...byCaller].sort((a, b) => b[1] - a[1])) console.log(line(micros, name));
console.log("---");
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(line(micros, name));
}
