import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

/** infra/kubernetes/, the manifests' root. */
export const KUBERNETES_DIR = fileURLToPath(new URL("../../kubernetes/", import.meta.url));

/** One parsed YAML document of a manifest file. */
export interface Manifest {
  /** Path below infra/kubernetes/, for messages. */
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
  readonly spec?: unknown;
  readonly [key: string]: unknown;
}

/** Every `*.yaml` below `dir`, relative to it. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".yaml"))
    .sort();
}

/** Every document of every file below infra/kubernetes/, kustomizations included; a YAML error throws with its file. */
export function loadManifests(dir: string = KUBERNETES_DIR): Manifest[] {
  return yamlFiles(dir).flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), "utf8")).map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
      const parsed = document.toJS() as Omit<Manifest, "file">;
      return { ...parsed, file: relative(dir, join(dir, file)) } as Manifest;
    }),
  );
}
