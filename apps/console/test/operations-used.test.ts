import fs from "node:fs";
import path from "node:path";
import { repoPath } from "@outbox/test-kit";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/*
 * `@outbox/relay/operations` and `@outbox/consumer/operations` are the console's doors to the
 * commands' code: every name they export is one more the daemons keep stable for it. They export what
 * the console imports, no more (and the console imports nothing they lack: typecheck says so).
 */

/** The names `export { … } from` lists in a barrel. */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) =>
    ts.isExportDeclaration(statement) &&
    statement.exportClause !== undefined &&
    ts.isNamedExports(statement.exportClause)
      ? statement.exportClause.elements.map((element) => element.name.text)
      : [],
  );
}

/** The names the console's sources import from `specifier`. */
function importedNames(dir: string, specifier: string): Set<string> {
  const names = new Set<string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".ts")) continue;
    const file = path.join(dir, entry);
    const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement)) continue;
      if (!ts.isStringLiteral(statement.moduleSpecifier) || statement.moduleSpecifier.text !== specifier)
        continue;
      const bindings = statement.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) names.add((element.propertyName ?? element.name).text);
      }
    }
  }
  return names;
}

describe("the operations barrels", () => {
  it.each([
    ["@outbox/relay/operations", "apps/relay/src/operations.ts"],
    ["@outbox/consumer/operations", "apps/consumer/src/operations.ts"],
  ])("%s exports only what the console imports", (specifier, barrel) => {
    const used = importedNames(repoPath("apps/console/src"), specifier);
    const unused = exportedNames(repoPath(barrel)).filter((name) => !used.has(name));
    expect(unused).toEqual([]);
  });
});
