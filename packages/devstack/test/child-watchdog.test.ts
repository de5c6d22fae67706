import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";

const parentScript = fileURLToPath(new URL("./support/watched-child-parent.ts", import.meta.url));

function alive(pid: number): boolean {
  try {
    // A zombie still answers signal 0 but holds nothing: look at its state.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

const cleanUps: (() => void)[] = [];
afterEach(() => {
  for (const cleanUp of cleanUps.splice(0)) cleanUp();
});

// Nothing runs in a process killed by SIGKILL: no exit listener can stop its children. The
// watchdog, a process of its own, sees the pipe from it close.
it("a child under killWithThisProcess dies, and its leftover goes, when its parent is killed by SIGKILL", async () => {
  const parent = spawn(process.execPath, ["--import", "tsx", parentScript], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  parent.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    parent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString()));
    parent.once("exit", () => reject(new Error(`the parent exited first: ${stderr}`)));
  });
  const { pid, leftover } = JSON.parse(line) as { pid: number; leftover: string };
  cleanUps.push(() => {
    if (alive(pid)) process.kill(pid, "SIGKILL");
    rmSync(leftover, { recursive: true, force: true });
  });
  expect([alive(pid), existsSync(leftover)]).toEqual([true, true]);

  parent.kill("SIGKILL");
  await expect.poll(() => alive(pid), { timeout: 30_000 }).toBe(false);
  await expect.poll(() => existsSync(leftover), { timeout: 30_000 }).toBe(false);
});
