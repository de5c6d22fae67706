import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { pageScript } from "./page-script.js";

/** A file the console serves under /assets: its type and its bytes, read once at start-up. */
export interface Asset {
  readonly type: string;
  readonly body: string;
}

/**
 * The sources of the assets, found from this module whether it runs as src/assets/load-assets.ts or as
 * dist/assets/load-assets.js (the package ships `src` beside `dist` for them, as the termination-race's).
 */
const SOURCES = new URL("../../src/assets/", import.meta.url);

function here(name: string): string {
  return fileURLToPath(new URL(name, SOURCES));
}

/** Every asset, by its path under /assets. */
export async function loadAssets(): Promise<ReadonlyMap<string, Asset>> {
  const require = createRequire(import.meta.url);
  const [script, style, chartStyle, icon] = await Promise.all([
    pageScript(),
    readFile(here("console.css"), "utf8"),
    readFile(require.resolve("uplot/dist/uPlot.min.css"), "utf8"),
    readFile(here("favicon.svg"), "utf8"),
  ]);
  return new Map([
    ["console.js", { type: "text/javascript; charset=utf-8", body: script }],
    ["console.css", { type: "text/css; charset=utf-8", body: style }],
    ["uPlot.min.css", { type: "text/css; charset=utf-8", body: chartStyle }],
    ["favicon.svg", { type: "image/svg+xml", body: icon }],
  ]);
}
