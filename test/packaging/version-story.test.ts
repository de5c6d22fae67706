import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { publishablePackages, workspacePackages } from "./publishable-packages.js";

/**
 * One version for a release (CHANGELOG.md's opening): every published package and every daemon
 * whose image we tag carries it, the changelog's newest entry is it, and the Kubernetes manifests
 * pin the images at it.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
/** The apps whose images a release tags (the Dockerfile's targets). */
const IMAGED_APPS = ["@outbox/api", "@outbox/consumer", "@outbox/relay"];

const released = [
  ...publishablePackages(root),
  ...workspacePackages(root).filter((pkg) => IMAGED_APPS.includes(pkg.name)),
];
const versions = new Map(released.map((pkg) => [pkg.name, pkg.manifest.version]));
const [version] = new Set(versions.values());

describe("the release's version", () => {
  it("is one, across the published packages and the imaged daemons", () => {
    expect(new Set(versions.values()).size, JSON.stringify(Object.fromEntries(versions))).toBe(1);
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("is the changelog's newest entry", () => {
    const changelog = fs.readFileSync(path.join(root, "CHANGELOG.md"), "utf8");
    const [newest] = [...changelog.matchAll(/^## (\d+\.\d+\.\d+)\b/gm)].map((match) => match[1]);
    expect(newest).toBe(version);
  });

  it("is the tag every Kubernetes kustomization pins the images at", () => {
    const kubernetes = path.join(root, "infra/kubernetes");
    const kustomizations = ["kustomization.yaml", "migrate/kustomization.yaml"].map((file) =>
      fs.readFileSync(path.join(kubernetes, file), "utf8"),
    );
    const tags = kustomizations.flatMap((text) =>
      [...text.matchAll(/newTag: "([^"]+)"/g)].map((match) => match[1]),
    );
    expect(tags.length).toBeGreaterThan(0);
    expect(new Set(tags)).toEqual(new Set([version]));
  });
});
