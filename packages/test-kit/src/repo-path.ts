import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Absolute path of a file in the repository, from a path relative to the repository root. */
export function repoPath(relative: string): string {
  return fileURLToPath(new URL(`../../../${relative}`, import.meta.url));
}

// tsx's loader as a file URL for `--import`: found from here, whatever the caller's working
// directory (import.meta.resolve is not there under vitest).
export const TSX_IMPORT = pathToFileURL(
  join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/loader.mjs"),
).href;
