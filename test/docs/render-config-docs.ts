import fs from "node:fs";
import { renderConfigTable, withConfigTable } from "@outbox/shared";
import { repoPath } from "@outbox/test-kit/process";
import { configPages } from "./config-pages.js";

// `pnpm docs:config`: regenerates the config tables in docs/ from the settings definitions.
for (const { page, settings } of configPages) {
  const file = repoPath(page);
  const before = fs.readFileSync(file, "utf8");
  const after = withConfigTable(before, renderConfigTable(settings));
  fs.writeFileSync(file, after);
  process.stdout.write(`${page}: ${before === after ? "up to date" : "updated"}\n`);
}
