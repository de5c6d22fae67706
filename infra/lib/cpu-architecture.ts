import * as ecs from "aws-cdk-lib/aws-ecs";

/**
 * The CPU the tasks run on, and the image platform that runs there. One table, so the task
 * definitions, the documented `docker buildx build --platform …` and the Kubernetes manifests'
 * node selector cannot drift apart (infra/test/cpu-architecture.test.ts reads all three). A task
 * whose image was built for the other platform fails to start (`exec format error`).
 */
export const CPU_ARCHITECTURES = {
  X86_64: { ecs: ecs.CpuArchitecture.X86_64, dockerPlatform: "linux/amd64", kubernetesArch: "amd64" },
  // Graviton: the same vCPU and memory cost about a fifth less on Fargate.
  ARM64: { ecs: ecs.CpuArchitecture.ARM64, dockerPlatform: "linux/arm64", kubernetesArch: "arm64" },
} as const;

export type CpuArchitectureName = keyof typeof CPU_ARCHITECTURES;

/** What the documented build produces: `docker buildx build --platform linux/amd64`. */
export const DEFAULT_CPU_ARCHITECTURE: CpuArchitectureName = "X86_64";

export function isCpuArchitectureName(value: string): value is CpuArchitectureName {
  return Object.hasOwn(CPU_ARCHITECTURES, value);
}

/** The runtime platform of every task definition of the stack. */
export function runtimePlatform(architecture: CpuArchitectureName): ecs.RuntimePlatform {
  return {
    cpuArchitecture: CPU_ARCHITECTURES[architecture].ecs,
    operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
  };
}
