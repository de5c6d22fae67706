import fs from "node:fs";
import path from "node:path";

/** One entry point of a package's exports map, as the workspace writes them. */
export interface EntryConditions {
  readonly development: string;
  readonly types: string;
  readonly default: string;
}

export interface PackageManifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly main?: string;
  readonly types?: string;
  readonly license?: string;
  readonly repository?: { readonly url?: string };
  readonly files?: readonly string[];
  readonly exports: Readonly<Record<string, EntryConditions>>;
  readonly publishConfig?: {
    readonly exports?: Readonly<Record<string, Omit<EntryConditions, "development">>>;
  };
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

export interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  readonly manifest: PackageManifest;
}

/** The workspace folders that hold libraries and daemons (pnpm-workspace.yaml's `apps/*`, `packages/*`). */
const PACKAGE_FOLDERS = ["apps", "packages"];

/** Every workspace package under apps/ and packages/, by name. */
export function workspacePackages(root: string): WorkspacePackage[] {
  return PACKAGE_FOLDERS.flatMap((folder) =>
    fs
      .readdirSync(path.join(root, folder))
      .map((entry) => path.join(root, folder, entry))
      .filter((dir) => fs.existsSync(path.join(dir, "package.json")))
      .map((dir) => {
        const manifest = JSON.parse(
          fs.readFileSync(path.join(dir, "package.json"), "utf8"),
        ) as PackageManifest;
        return { name: manifest.name, dir, manifest };
      }),
  ).sort((a, b) => a.name.localeCompare(b.name));
}

/** The packages a release publishes: every workspace package not marked `private`. */
export function publishablePackages(root: string): WorkspacePackage[] {
  return workspacePackages(root).filter((pkg) => pkg.manifest.private !== true);
}
