import { oncePerRun } from "@outbox/test-kit";
import { type Packed, packAll } from "./pack-check.js";
import { publishablePackages } from "./publishable-packages.js";

/**
 * Every publishable package, built and packed once per test run (`pnpm pack`, through each
 * package's prepack build), whichever packaging test asks first; the others install the same
 * tarballs. One build instead of one per file, and never two at once (`oncePerRun` holds the
 * workspace build lock).
 */
export function packedPublishable(root: string): Promise<Packed[]> {
  return oncePerRun("packed", (folder) => packAll(root, publishablePackages(root), folder));
}

/** The packed package named `name`. */
export function packedNamed(packed: readonly Packed[], name: string): Packed {
  const found = packed.find(({ manifest }) => manifest.name === name);
  if (found === undefined) throw new Error(`${name} is not among the publishable packages`);
  return found;
}
