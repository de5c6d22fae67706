import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { packAll, prepareRelease, releaseSteps } from "./pack-check.js";
import { publishablePackages } from "./publishable-packages.js";

/**
 * `pnpm release:check`: packs every publishable package and checks the tarballs as an application
 * gets them (pack-check.ts), in a scratch directory it removes afterwards. Exit 0 when all passed.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "outbox-release-check-"));
try {
  const packages = publishablePackages(root);
  console.log(`packing ${packages.map((pkg) => `${pkg.name}@${pkg.manifest.version}`).join(", ")}`);
  const packed = await packAll(root, packages, temp);
  const app = await prepareRelease(root, packed, temp);
  for (const step of releaseSteps(root)) {
    await step.run(app, packed);
    console.log(`ok  ${step.label}`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
} finally {
  fs.rmSync(temp, { recursive: true, force: true });
}
