import { fileURLToPath } from "node:url";

/** Absolute path of a file in the repository, from a path relative to the repository root. */
export function repoPath(relative: string): string {
  return fileURLToPath(new URL(`../../${relative}`, import.meta.url));
}
