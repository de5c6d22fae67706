import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sqlMigrationFiles } from "./sql-migrations.js";

/**
 * Writes packages/client/sql from the kysely migrations (`pnpm sql:migrations`); with `--check`,
 * writes nothing and exits 1 naming every file that is missing, stale or left over.
 */
const dir = fileURLToPath(new URL("../sql/", import.meta.url));
const check = process.argv.includes("--check");
const wanted = await sqlMigrationFiles();
const present = fs.existsSync(dir) ? fs.readdirSync(dir).filter((file) => file.endsWith(".sql")) : [];
/** Files no migration makes any more. */
const leftOver = present.filter((file) => !wanted.some((w) => w.file === file));
const problems = [
  ...wanted
    .filter(
      ({ file, text }) => !present.includes(file) || fs.readFileSync(path.join(dir, file), "utf8") !== text,
    )
    .map(({ file }) => `${file}: missing or not what the migration makes`),
  ...leftOver.map((file) => `${file}: no such migration`),
];
if (check) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) {
    process.stderr.write("run `pnpm sql:migrations` to write packages/client/sql again\n");
    process.exit(1);
  }
} else {
  fs.mkdirSync(dir, { recursive: true });
  for (const file of leftOver) fs.rmSync(path.join(dir, file));
  for (const { file, text } of wanted) fs.writeFileSync(path.join(dir, file), text);
  process.stdout.write(`wrote ${wanted.length} files into ${dir}\n`);
}
