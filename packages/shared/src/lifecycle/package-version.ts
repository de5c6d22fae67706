import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The `version` of the nearest package.json above a module, for the `version` field of every log line. */
export function packageVersion(moduleUrl: string): string {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const candidate = path.join(dir, "package.json");
    if (fs.existsSync(candidate)) {
      const { version } = JSON.parse(fs.readFileSync(candidate, "utf8")) as { version?: string };
      return version ?? "0.0.0";
    }
    const parent = path.dirname(dir);
    if (parent === dir) return "0.0.0";
    dir = parent;
  }
}
