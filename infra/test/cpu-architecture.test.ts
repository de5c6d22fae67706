import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  CPU_ARCHITECTURES,
  type CpuArchitectureName,
  DEFAULT_CPU_ARCHITECTURE,
} from "../lib/cpu-architecture.js";
import { loadManifests } from "./support/kubernetes-manifests.js";
import { synth } from "./support/synth.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const DOCUMENTED = { "docs/deployment.md": read("docs/deployment.md"), Dockerfile: read("Dockerfile") };

/**
 * Every `docker … build` command in a text (one with options: prose naming `docker build` is not a
 * command), and the platform it names (undefined: none).
 */
function buildCommands(text: string): { command: string; platform: string | undefined }[] {
  return [...text.matchAll(/docker (?:buildx )?build +-[^\n`]*/g)].map(([command]) => ({
    command,
    platform: /--platform[ =](\S+)/.exec(command)?.[1],
  }));
}

/** The CPU architecture of every task definition the stack synthesizes. */
function taskArchitectures(cpuArchitecture?: CpuArchitectureName): string[] {
  const { template } = synth({
    api: { equipmentUrl: "https://equipment.internal/" },
    ...(cpuArchitecture ? { cpuArchitecture } : {}),
  });
  return Object.values(template.findResources("AWS::ECS::TaskDefinition")).map(
    (definition) => definition.Properties.RuntimePlatform?.CpuArchitecture,
  );
}

describe("the tasks' CPU and the documented build", () => {
  const defaults = CPU_ARCHITECTURES[DEFAULT_CPU_ARCHITECTURE];

  it("every documented build names its platform, the default's: a plain docker build would take the builder's CPU", () => {
    for (const [file, text] of Object.entries(DOCUMENTED)) {
      const commands = buildCommands(text);
      expect(commands.length, file).toBeGreaterThan(0);
      for (const { command, platform } of commands) {
        expect(command, `${file}: ${command}`).toMatch(/^docker buildx build /);
        expect(platform, `${file}: ${command}`).toBe(defaults.dockerPlatform);
      }
    }
  });

  it("runs every task definition (services, migration, reconcile) on the default's CPU by default", () => {
    const architectures = taskArchitectures();
    expect(architectures).toHaveLength(5);
    // CloudFormation's value is the setting's name (X86_64, ARM64).
    expect(new Set(architectures)).toEqual(new Set([DEFAULT_CPU_ARCHITECTURE]));
  });

  it("runs every task definition on ARM64 with cpuArchitecture ARM64", () => {
    expect(new Set(taskArchitectures("ARM64"))).toEqual(new Set(["ARM64"]));
  });

  it("documents each setting with the platform to build and the node label, as lib/cpu-architecture.ts has them", () => {
    const rows = [
      ...DOCUMENTED["docs/deployment.md"].matchAll(
        /^\| `(\w+)`(?: \(default\))?\s*\|[^|]*\| `--platform (\S+)`\s*\| `(\w+)`\s*\|$/gm,
      ),
    ].map(([, name, platform, arch]) => ({ name, platform, arch }));
    expect(rows).toEqual(
      Object.entries(CPU_ARCHITECTURES).map(([name, architecture]) => ({
        name,
        platform: architecture.dockerPlatform,
        arch: architecture.kubernetesArch,
      })),
    );
    expect(DOCUMENTED["docs/deployment.md"]).toContain(`| \`${DEFAULT_CPU_ARCHITECTURE}\` (default)`);
  });

  it("schedules every Kubernetes pod on nodes of the default's CPU", () => {
    const pods = loadManifests().flatMap((manifest) => {
      const template = (manifest.spec as { template?: { spec?: { nodeSelector?: Record<string, string> } } })
        ?.template;
      return template
        ? [{ name: manifest.metadata.name, arch: template.spec?.nodeSelector?.["kubernetes.io/arch"] }]
        : [];
    });
    expect(pods.length).toBe(5);
    for (const pod of pods) expect(pod.arch, pod.name).toBe(defaults.kubernetesArch);
  });
});
