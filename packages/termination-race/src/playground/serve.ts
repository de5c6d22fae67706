import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { RaceSetup } from "../race-setup.js";

export interface Playground {
  readonly url: string;
  /** Stops listening and closes every connection, kept-alive ones included. */
  close(): Promise<void>;
}

const INITIAL_SETUP_SLOT = '<script type="application/json" id="initial-setup">null</script>';

/** Everything the page needs comes from here: no script, style or font from anywhere else. */
const HEADERS = {
  "cache-control": "no-store",
  "content-security-policy": "default-src 'self'",
  "x-content-type-options": "nosniff",
};

interface Asset {
  readonly type: string;
  readonly body: string;
}

function asset(name: string): URL {
  return new URL(name, import.meta.url);
}

/** The page's script: the simulator and the planner, bundled from these same sources for the browser. */
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(asset("page.ts"))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild produced no bundle for the playground page");
  return output.text;
}

/** The HTML with the command line's setup in its data block (`<` escaped: it sits inside a script element). */
async function pageHtml(initial: RaceSetup): Promise<string> {
  const html = await readFile(asset("index.html"), "utf8");
  if (!html.includes(INITIAL_SETUP_SLOT)) throw new Error("index.html has lost its initial-setup block");
  const data = JSON.stringify(initial).replaceAll("<", "\\u003c");
  return html.replace(INITIAL_SETUP_SLOT, INITIAL_SETUP_SLOT.replace("null", data));
}

/**
 * Serves the playground on 127.0.0.1 (`port` 0: a free one): the page, its style, its script built at
 * start-up. Resolves once it listens; a port in use rejects with the listen error.
 */
export async function servePlayground(options: {
  readonly port: number;
  readonly initial: RaceSetup;
}): Promise<Playground> {
  const [html, script, style, icon] = await Promise.all([
    pageHtml(options.initial),
    bundlePage(),
    readFile(asset("page.css"), "utf8"),
    readFile(asset("favicon.svg"), "utf8"),
  ]);
  const assets: Readonly<Record<string, Asset>> = {
    "/": { type: "text/html; charset=utf-8", body: html },
    "/page.js": { type: "text/javascript; charset=utf-8", body: script },
    "/page.css": { type: "text/css; charset=utf-8", body: style },
    "/favicon.svg": { type: "image/svg+xml", body: icon },
  };
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    const found = Object.hasOwn(assets, path) ? assets[path] : undefined;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { ...HEADERS, allow: "GET, HEAD", "content-type": "text/plain" });
      response.end("only GET and HEAD\n");
      return;
    }
    if (!found) {
      response.writeHead(404, { ...HEADERS, "content-type": "text/plain" });
      response.end(`no ${path} here: the playground is at /\n`);
      return;
    }
    response.writeHead(200, { ...HEADERS, "content-type": found.type });
    response.end(request.method === "HEAD" ? undefined : found.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
