// Starts a child (a node process that idles) under killWithThisProcess, with a folder of its own
// as its leftover, prints one JSON line {pid, leftover}, then idles until it is killed.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killWithThisProcess } from "../../src/child-watchdog.js";

const leftover = mkdtempSync(join(tmpdir(), "outbox-watched-"));
const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { stdio: "ignore" });
killWithThisProcess(child, leftover);
console.log(JSON.stringify({ pid: child.pid, leftover }));
setInterval(() => {}, 60_000);
