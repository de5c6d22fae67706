import { mkdir, readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/**
 * Where `pnpm build` writes the page's script, and where a built console reads it: found from this
 * module whether it runs as src/assets/page-script.ts or as dist/assets/page-script.js.
 */
const BUILT = new URL("../../dist/assets/console.js", import.meta.url);
/** The page's source: the package ships `src` beside `dist` for the assets. */
const PAGE = new URL("../../src/assets/page.ts", import.meta.url);

/**
 * The page's script with uPlot, bundled for the browser from the installed package: nothing from a
 * CDN. esbuild is loaded here only: a built console never loads it.
 */
async function bundlePage(): Promise<string> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [fileURLToPath(PAGE)],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild produced no bundle for the console's page");
  return output.text;
}

/**
 * The page's script. A built console (dist/, `pnpm build`) reads the bundle its build wrote; run from
 * its sources (`pnpm console`, the tests, the drills' `pnpm start`), it bundles page.ts at start-up,
 * so an edit of the page shows at the next start without a build.
 */
export function pageScript(): Promise<string> {
  return import.meta.url.endsWith(".ts") ? bundlePage() : readFile(BUILT, "utf8");
}

/** The build's step after tsc (package.json's `build`): the bundle, written where pageScript reads it. */
export async function writePageScript(): Promise<void> {
  await mkdir(new URL(".", BUILT), { recursive: true });
  await writeFile(BUILT, await bundlePage());
}
