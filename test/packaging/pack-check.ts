import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { PackageManifest, WorkspacePackage } from "./publishable-packages.js";

/**
 * What a release checks of each publishable package, as an application outside this repo gets it:
 * `pnpm pack` (which builds it, and writes `publishConfig`'s exports map), an offline install of the
 * tarballs into a scratch app, a type-check of an import of every entry point under each module
 * resolution and TypeScript major an application may use, and a run that imports each of them.
 * Third-party packages are linked to the workspace's installed copies, so nothing is fetched and the
 * lockfile decides every version. `pnpm release:check` (release-check.ts) and
 * test/packaging/client-package.test.ts both run it.
 */
const run = promisify(execFile);

export interface Packed {
  readonly pkg: WorkspacePackage;
  readonly tarball: string;
  /** The manifest as packed: what an application's package manager reads. */
  readonly manifest: PackageManifest;
}

/** A TypeScript compiler of the workspace: 5.x is `typescript`, the current major the `typescript-7` alias. */
export interface Compiler {
  readonly label: string;
  readonly tsc: string;
}

export function compilers(root: string): Compiler[] {
  return [
    { label: "TypeScript 5", tsc: path.join(root, "node_modules/typescript/bin/tsc") },
    // TypeScript 7's tsc is a native binary; its bin/tsc (run by node) execs it.
    { label: "TypeScript 7", tsc: path.join(root, "node_modules/typescript-7/bin/tsc") },
  ];
}

/**
 * How an application resolves modules. TypeScript 7 removed `node10` (TS5108), so node10 is checked
 * with 5.x only; `types: ["node"]` because TypeScript 6 and later load no `@types` package unless named.
 */
export interface Resolution {
  readonly label: string;
  readonly compilerOptions: Readonly<Record<string, string | boolean>>;
  readonly compilers: readonly string[];
}

const RESOLUTIONS: readonly Resolution[] = [
  {
    label: "module nodenext",
    compilerOptions: { module: "nodenext", moduleResolution: "nodenext" },
    compilers: ["TypeScript 5", "TypeScript 7"],
  },
  {
    label: "moduleResolution bundler",
    compilerOptions: { module: "esnext", moduleResolution: "bundler" },
    compilers: ["TypeScript 5", "TypeScript 7"],
  },
  {
    label: "moduleResolution node10",
    compilerOptions: { module: "commonjs", moduleResolution: "node10", esModuleInterop: true },
    compilers: ["TypeScript 5"],
  },
];

/**
 * `pnpm pack` of each package into `dest`, with the manifest the tarball holds. Built first, in
 * dependency order (a package's build reads the declarations of the workspace packages it imports),
 * then packed: each pack builds its package again (prepack), from up-to-date dependencies.
 */
export async function packAll(
  root: string,
  packages: readonly WorkspacePackage[],
  dest: string,
): Promise<Packed[]> {
  await run("pnpm", [...packages.flatMap((pkg) => ["--filter", pkg.name]), "run", "build"], { cwd: root });
  const packed: Packed[] = [];
  for (const pkg of packages) {
    const before = new Set(fs.readdirSync(dest));
    await run("pnpm", ["pack", "--pack-destination", dest], { cwd: pkg.dir });
    const tarball = fs.readdirSync(dest).find((name) => name.endsWith(".tgz") && !before.has(name));
    if (tarball === undefined) throw new Error(`pnpm pack of ${pkg.name} wrote no tarball into ${dest}`);
    const { stdout } = await run("tar", ["-xzOf", path.join(dest, tarball), "package/package.json"]);
    packed.push({ pkg, tarball: path.join(dest, tarball), manifest: JSON.parse(stdout) as PackageManifest });
  }
  return packed;
}

/** The workspace's installed copy of a third-party package, as the package that depends on it sees it. */
export function installedCopy(root: string, name: string, fromDirs: readonly string[]): string {
  for (const dir of [...fromDirs, root, path.join(root, "test")]) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  throw new Error(`${name} is not installed in the workspace (looked from ${fromDirs.join(", ")})`);
}

function isOptionalPeer(manifest: PackageManifest, name: string): boolean {
  return (
    manifest.peerDependenciesMeta?.[name]?.optional === true && manifest.dependencies?.[name] === undefined
  );
}

/**
 * Writes and installs (offline) a scratch app that depends on the packed tarballs and on `links`
 * (name → a directory to link). Every third-party dependency and required peer of the packed
 * packages is linked to the workspace's copy unless `links` names it (an optional peer only if it does), and each packed package depended on by
 * another resolves to its tarball (an override), never to the registry.
 */
export async function installScratchApp(
  root: string,
  app: string,
  packed: readonly Packed[],
  links: Readonly<Record<string, string>>,
  store: string,
): Promise<void> {
  const tarballs = new Map(packed.map((entry) => [entry.manifest.name, `file:${entry.tarball}`]));
  const thirdParty: Record<string, string> = {};
  for (const { pkg, manifest } of packed) {
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      if (!tarballs.has(name) && links[name] === undefined && !isOptionalPeer(manifest, name)) {
        thirdParty[name] = `link:${installedCopy(root, name, [pkg.dir])}`;
      }
    }
  }
  const linked = Object.fromEntries(Object.entries(links).map(([name, dir]) => [name, `link:${dir}`]));
  fs.mkdirSync(app, { recursive: true });
  fs.writeFileSync(
    path.join(app, "package.json"),
    JSON.stringify({
      name: "scratch-app",
      private: true,
      type: "module",
      dependencies: { ...Object.fromEntries(tarballs), ...thirdParty, ...linked },
      pnpm: { overrides: { ...Object.fromEntries(tarballs), ...thirdParty, ...linked } },
    }),
  );
  await run("pnpm", ["install", "--offline", "--store-dir", store], {
    cwd: app,
    env: { ...process.env, CI: "true", npm_config_cache_dir: path.join(store, "..", "cache") },
  });
}

/** Every entry point of a packed package, as an application imports it. */
function specifiers({ manifest }: Packed): string[] {
  return Object.keys(manifest.exports).map((subpath) =>
    subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
  );
}

/** Compiles the project `tsconfig` (a file in `app`) with the compiler given; throws tsc's output. */
export async function compile(app: string, compiler: Compiler, tsconfig: string): Promise<void> {
  try {
    await run(process.execPath, [compiler.tsc, "-p", tsconfig], { cwd: app });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`${compiler.label}: tsc -p ${tsconfig} failed in ${app}\n${stdout}${stderr}`);
  }
}

/** Type-checks `files` in `app` under a resolution, with the compiler given; throws tsc's output. */
async function typeCheck(
  app: string,
  compiler: Compiler,
  resolution: Resolution,
  files: readonly string[],
): Promise<void> {
  const tsconfig = `tsconfig.${String(resolution.compilerOptions.moduleResolution)}.json`;
  fs.writeFileSync(
    path.join(app, tsconfig),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2023", "DOM"],
        ...resolution.compilerOptions,
        strict: true,
        // The packages' declarations are checked too: a type one ships broken fails here.
        skipLibCheck: false,
        types: ["node"],
        noEmit: true,
      },
      files,
    }),
  );
  await compile(app, compiler, tsconfig).catch((error: Error) => {
    throw new Error(`${resolution.label}, ${error.message}`);
  });
}

const ENTRY_POINTS_FILE = "entry-points.ts";

/** A module that imports every entry point of the packed packages, for the compilers to check. */
function writeEntryPoints(app: string, packed: readonly Packed[]): void {
  const entries = packed.flatMap(specifiers);
  fs.writeFileSync(
    path.join(app, ENTRY_POINTS_FILE),
    `${entries.map((specifier, index) => `import * as entry${index} from "${specifier}";`).join("\n")}\nexport const entries = [${entries.map((_, index) => `entry${index}`).join(", ")}];\n`,
  );
}

/**
 * Installs the packed packages all into `temp/app`, with every optional peer too (an entry point
 * may need one: `@outbox/client/claim-check` the S3 client), beside a module importing every entry
 * point, which `releaseSteps` compile.
 */
export async function prepareRelease(root: string, packed: readonly Packed[], temp: string): Promise<string> {
  const links: Record<string, string> = { "@types/node": installedCopy(root, "@types/node", []) };
  for (const { pkg, manifest } of packed) {
    for (const name of Object.keys(manifest.peerDependencies ?? {})) {
      links[name] ??= installedCopy(root, name, [pkg.dir]);
    }
  }
  const app = path.join(temp, "app");
  await installScratchApp(root, app, packed, links, path.join(temp, "store"));
  writeEntryPoints(app, packed);
  return app;
}

/**
 * What a packed manifest lacks that an application's tools need: no `development` condition (it
 * points at src/, which is not shipped), `main` and `types` for resolvers that ignore `exports`, a
 * license, the repository, and a `files` list (nothing packed by accident).
 */
function manifestProblems({ pkg, manifest }: Packed): string[] {
  const problems: string[] = [];
  // publishConfig.exports replaces the map at pack time: an entry point added to one and not the
  // other would be missing from what applications install.
  for (const subpath of Object.keys(pkg.manifest.exports))
    if (!(subpath in manifest.exports)) problems.push(`the packed exports lack ${subpath}`);
  if (JSON.stringify(manifest.exports).includes('"development"'))
    problems.push("exports has a development condition");
  if (manifest.main !== "./dist/index.js")
    problems.push(`main is ${String(manifest.main)}, not ./dist/index.js`);
  if (manifest.types !== "./dist/index.d.ts")
    problems.push(`types is ${String(manifest.types)}, not ./dist/index.d.ts`);
  if (manifest.license === undefined) problems.push("no license");
  if (manifest.repository?.url === undefined) problems.push("no repository");
  if (manifest.files === undefined) problems.push("no files list");
  return problems.map((problem) => `${manifest.name}: ${problem}`);
}

/** One step of the release check, run in a scratch app where the packed packages are installed. */
export interface ReleaseStep {
  readonly label: string;
  readonly run: (app: string, packed: readonly Packed[]) => Promise<void>;
}

/**
 * The release check's steps, in order: the packed manifests (`manifestProblems`); every entry point
 * imported and type-checked under each resolution and compiler; every entry point loaded by node,
 * once plainly and once with `--conditions=development` (the workspace's condition must not be
 * shipped: it points at src/, which is not in the tarball). Each step throws what failed.
 */
export function releaseSteps(root: string): ReleaseStep[] {
  const manifests: ReleaseStep = {
    label: "manifests",
    run: async (_app, packed) => {
      const problems = packed.flatMap(manifestProblems);
      if (problems.length > 0) throw new Error(`the packed manifests:\n${problems.join("\n")}`);
    },
  };
  const compiles = RESOLUTIONS.flatMap((resolution) =>
    compilers(root)
      .filter((compiler) => resolution.compilers.includes(compiler.label))
      .map(
        (compiler): ReleaseStep => ({
          label: `compiles: ${compiler.label}, ${resolution.label}`,
          run: (app) => typeCheck(app, compiler, resolution, [ENTRY_POINTS_FILE]),
        }),
      ),
  );
  const runs = [[], ["--conditions=development"]].map(
    (conditions): ReleaseStep => ({
      label: `runs: node ${[...conditions, "import"].join(" ")} of every entry point`,
      run: async (app, packed) => {
        for (const specifier of packed.flatMap(specifiers)) {
          const script = `await import(${JSON.stringify(specifier)});`;
          await run(process.execPath, [...conditions, "--input-type=module", "-e", script], { cwd: app });
        }
      },
    }),
  );
  return [manifests, ...compiles, ...runs];
}
