import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { publishablePackages } from "./publishable-packages.js";

/**
 * Each publishable package's entry points export what its README's "API" section documents, no
 * more and no less: a name exported by accident becomes a semver promise, a name documented and
 * gone breaks an application. The section has one `### \`<import specifier>\`` heading per entry
 * point, a "Values:" list (what the module has at run time) and a "Types:" list; an entry point
 * whose section says "no semver promise" is internal and lists nothing.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));

interface EntryDocs {
  readonly values: readonly string[];
  readonly types: readonly string[];
  readonly internal: boolean;
}

/** `- \`a(x)\`, \`B\`: prose` → ["a", "B"]: the backticked names a bullet opens with. */
function bulletNames(bullet: string): string[] {
  const names: string[] = [];
  let rest = bullet;
  for (let match = /^`([^`]+)`/.exec(rest); match !== null; match = /^,\s*`([^`]+)`/.exec(rest)) {
    names.push((match[1] ?? "").replace(/\(.*$/, ""));
    rest = rest.slice(match[0].length);
  }
  return names;
}

/** The README's API section: per entry point, its documented value and type names. */
function documentedApi(readme: string): Map<string, EntryDocs> {
  const section = /^## API\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (section === undefined) throw new Error('the README has no "## API" section');
  const entries = new Map<string, EntryDocs>();
  for (const [, specifier, body = ""] of section.matchAll(
    /^### `([^`]+)`\n([\s\S]*?)(?=^### |(?![\s\S]))/gm,
  )) {
    const lists = { values: [] as string[], types: [] as string[] };
    let list: string[] | undefined;
    // A bullet's continuation lines are indented: join them to the bullet first.
    for (const line of body.replace(/\n {2}/g, " ").split("\n")) {
      if (line === "Values:") list = lists.values;
      else if (line === "Types:") list = lists.types;
      else if (line.startsWith("- ") && list !== undefined) list.push(...bulletNames(line.slice(2)));
    }
    entries.set(specifier ?? "", { ...lists, internal: body.includes("no semver promise") });
  }
  return entries;
}

/** Every name a TypeScript module exports, values and types, as an importer sees them. */
function exportedNames(sourceFile: string): { all: string[]; types: string[] } {
  const program = ts.createProgram([sourceFile], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: ["development"],
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(sourceFile);
  const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`${sourceFile} is not a module`);
  const symbols = checker.getExportsOfModule(moduleSymbol);
  const isValue = (symbol: ts.Symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return (
      (target.flags & ts.SymbolFlags.Value) !== 0 &&
      !symbol.declarations?.some(ts.isTypeOnlyExportDeclaration)
    );
  };
  return {
    all: symbols.map((symbol) => symbol.name).sort(),
    types: symbols
      .filter((symbol) => !isValue(symbol))
      .map((symbol) => symbol.name)
      .sort(),
  };
}

const sorted = (names: readonly string[]) => [...names].sort();

describe.each(publishablePackages(root))("$name's public surface", ({ name, dir, manifest }) => {
  const readme = fs.readFileSync(path.join(dir, "README.md"), "utf8");
  const documented = documentedApi(readme);
  const entryPoints = Object.entries(manifest.exports).map(([subpath, conditions]) => ({
    specifier: subpath === "." ? name : `${name}/${subpath.slice(2)}`,
    source: path.join(dir, conditions.development),
  }));

  it("documents every entry point in its exports map, and no other", () => {
    expect(sorted([...documented.keys()])).toEqual(sorted(entryPoints.map((entry) => entry.specifier)));
  });

  for (const { specifier, source } of entryPoints) {
    it(`${specifier}: exports exactly the README's names, values at run time and types`, async () => {
      const docs = documented.get(specifier);
      if (docs === undefined) throw new Error(`the README's API section has no ${specifier}`);
      if (docs.internal) {
        expect([...docs.values, ...docs.types]).toEqual([]);
        return;
      }
      const runtime = Object.keys((await import(source)) as object);
      expect(sorted(runtime)).toEqual(sorted(docs.values));
      const { all, types } = exportedNames(source);
      expect(all).toEqual(sorted([...docs.values, ...docs.types]));
      expect(types).toEqual(sorted(docs.types));
    });
  }
});
