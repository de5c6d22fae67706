import { readFileSync } from "node:fs";

// Self time of a .cpuprofile by function and by package (node_modules/<pkg>, node: internals, ours).
// Run: pnpm exec tsx apps/consumer/bench/profile-summary.ts file.cpuprofile [top=30]

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

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-summary.ts file.cpuprofile [top]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, index) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

function pkg(url: string): string {
  if (url === "") return "(native/gc/idle)";
  const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match?.[1]) return match[1];
  if (url.startsWith("node:")) return "node:internal";
  const ours = /\/work\/main\/((?:apps|packages)\/[^/]+)/.exec(url);
  return ours?.[1] ?? url;
}

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || "(anonymous)"} ${url.replace(/.*node_modules\//, "").replace("/work/main/", "")}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  const group = ["(idle)", "(program)", "(garbage collector)"].includes(functionName)
    ? functionName
    : pkg(url);
  byPackage.set(group, (byPackage.get(group) ?? 0) + us);
}
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
console.log(`total ${(total / 1e6).toFixed(2)} s sampled`);
for (const [name, us] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`${pct(us)}  ${name}`);
console.log("---");
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30))) {
  console.log(`${pct(us)}  ${name}`);
}
