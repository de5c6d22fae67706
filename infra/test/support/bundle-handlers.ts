import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

/**
 * esbuild, as the workspace has it (tsx's): no dependency of its own for the one bundle the
 * packaging test makes.
 */
function esbuildBin(root: string): string {
  const tsx = fs.realpathSync(path.join(root, "node_modules/tsx/package.json"));
  const manifest = createRequire(tsx).resolve("esbuild/package.json");
  return path.join(path.dirname(manifest), "bin/esbuild");
}

/**
 * Bundles a handlers module the way docs/deployment.md tells a team to ("Your handlers in our
 * image"): one ESM file holding the module's dependencies, @outbox/client included. `dependencies`
 * names the packages the module's project has, each linked from the workspace directory it is
 * installed in, as a team's own node_modules would hold them.
 */
export async function bundleHandlers(options: {
  readonly root: string;
  readonly source: string;
  readonly outfile: string;
  readonly dependencies: Readonly<Record<string, string>>;
}): Promise<void> {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-handlers-project-"));
  try {
    for (const [name, from] of Object.entries(options.dependencies)) {
      const link = path.join(project, "node_modules", name);
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(fs.realpathSync(path.join(options.root, from, "node_modules", name)), link);
    }
    const entry = path.join(project, path.basename(options.source));
    fs.copyFileSync(options.source, entry);
    await promisify(execFile)(esbuildBin(options.root), [
      entry,
      "--bundle",
      "--platform=node",
      "--format=esm",
      "--target=node22",
      "--external:@opentelemetry/api",
      `--outfile=${options.outfile}`,
      "--log-level=warning",
    ]);
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
}
