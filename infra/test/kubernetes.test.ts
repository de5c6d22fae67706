import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { parseArgs } from "node:util";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";
import { consoleProblems, consoleSettings } from "@outbox/console";
import { resolveConfig } from "@outbox/shared";
import { durationOption } from "@outbox/shared/command-line";
import { describeSettings, plan } from "@outbox/termination-race";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Job } from "kubernetes-models/batch/v1/Job";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { describe, expect, it } from "vitest";
import { type Daemon, envNamesOf, settingsFor, startupProblems } from "../lib/budget.js";
import { isPlatformVariable } from "../lib/platform-environment.js";
import { KUBERNETES_DIR, loadManifests, type Manifest } from "./support/kubernetes-manifests.js";

/** A kubernetes-models class: built from a manifest, `validate()` throws with the schema's first complaint. */
type ModelClass = new (data: never) => { validate(): void };

/**
 * The schema of each kind the manifests use: the Kubernetes OpenAPI schemas (kubernetes-models) and
 * KEDA's CRD schemas (@kubernetes-models/keda), compiled validators shipped in the packages, offline.
 */
const SCHEMAS: Readonly<Record<string, ModelClass>> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
  "keda.sh/v1alpha1/TriggerAuthentication": TriggerAuthentication,
};

/** The schema's verdict on one manifest: the validator's message, or undefined when it holds. */
function schemaProblem(manifest: Manifest): string | undefined {
  const Schema = SCHEMAS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!Schema) return `${manifest.file}: no schema for ${manifest.apiVersion} ${manifest.kind}`;
  const { file: _file, ...data } = manifest;
  try {
    new Schema(data as never).validate();
    return undefined;
  } catch (error) {
    return `${manifest.file} ${manifest.kind}/${manifest.metadata.name}: ${(error as Error).message}`;
  }
}

const all = loadManifests();
const KUSTOMIZATION = "kustomize.config.k8s.io/v1beta1/Kustomization";
const isKustomization = (manifest: Manifest) => `${manifest.apiVersion}/${manifest.kind}` === KUSTOMIZATION;
const objects = all.filter((manifest) => !isKustomization(manifest));
const ofKind = <T>(kind: string) =>
  objects.filter((manifest) => manifest.kind === kind) as unknown as (T & Manifest)[];
const named = <T>(kind: string, name: string): T & Manifest => {
  const found = ofKind<T>(kind).find((manifest) => manifest.metadata.name === name);
  if (!found) throw new Error(`no ${kind} named ${name}`);
  return found;
};

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: { name: string; key: string };
    secretKeyRef?: { name: string; key: string };
  };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
}
interface Container {
  name: string;
  image: string;
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface PodSpec {
  containers: Container[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  nodeSelector?: Record<string, string>;
}
interface DeploymentManifest {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

const configMap = named<{ data: Record<string, string> }>("ConfigMap", "outbox-aws");

/** A container's environment as the daemon sees it: ConfigMap references resolved, secrets left out. */
function environmentOf(container: Container): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const fromConfigMap = variable.valueFrom?.configMapKeyRef;
    if (variable.value !== undefined) environment[variable.name] = variable.value;
    else if (fromConfigMap) {
      expect(fromConfigMap.name).toBe(configMap.metadata.name);
      const value = configMap.data[fromConfigMap.key];
      if (value === undefined)
        throw new Error(`${container.name}: the ConfigMap has no ${fromConfigMap.key}`);
      environment[variable.name] = value;
    }
  }
  return environment;
}

/**
 * `pnpm plan`'s own command line, from the Deployment's stop-plan annotation, in milliseconds: the
 * options parsed strictly and the durations read by the planner CLI's own parser.
 */
function stopPlanOf(deployment: Manifest): {
  propagationMs: number;
  longestRequestMs: number;
  drainMs: number;
} {
  const annotation = deployment.metadata.annotations?.["outbox-workers/stop-plan"];
  if (!annotation) throw new Error(`${deployment.metadata.name} has no outbox-workers/stop-plan annotation`);
  const [pnpm, command, ...args] = annotation.split(/\s+/);
  expect([pnpm, command]).toEqual(["pnpm", "plan"]);
  const option = { type: "string" } as const;
  const { values } = parseArgs({
    args,
    strict: true,
    options: { platform: option, propagation: option, "longest-request": option, drain: option },
  });
  expect(values.platform).toBe("k8s");
  const duration = (name: "propagation" | "longest-request" | "drain") => {
    const ms = durationOption(annotation, name, values[name]);
    if (ms === undefined) throw new Error(`${deployment.metadata.name}: the stop plan has no --${name}`);
    return ms;
  };
  return {
    propagationMs: duration("propagation"),
    longestRequestMs: duration("longest-request"),
    drainMs: duration("drain"),
  };
}

const DAEMONS: readonly Daemon[] = ["relay", "consumer", "api"];
const number = (environment: Record<string, string>, name: string) => {
  const value = environment[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return Number(value);
};

/** What each daemon's whole stop after SIGTERM is, from its environment (the ECS stack's rules, docs/deployment.md). */
const stopOf: Readonly<
  Record<Daemon, (env: Record<string, string>) => { drainMs: number; longestRequestMs: number }>
> = {
  relay: (env) => {
    const drainMs = number(env, "RELAY_DRAIN_TIMEOUT_MS") + number(env, "SHUTDOWN_OVERHEAD_MS");
    return { drainMs, longestRequestMs: drainMs };
  },
  consumer: (env) => {
    const drainMs =
      number(env, "CONSUMER_WAIT_TIME_SECONDS") * 1000 +
      number(env, "CONSUMER_DRAIN_TIMEOUT_MS") +
      number(env, "SHUTDOWN_OVERHEAD_MS");
    return { drainMs, longestRequestMs: drainMs };
  },
  api: (env) => ({
    drainMs: number(env, "API_DRAIN_TIMEOUT_MS") + number(env, "SHUTDOWN_OVERHEAD_MS"),
    longestRequestMs: number(env, "API_HANDLER_TIMEOUT_MS"),
  }),
};

function deploymentOf(daemon: Daemon | "console"): DeploymentManifest & Manifest {
  return named<DeploymentManifest>("Deployment", `outbox-${daemon}`);
}
function containerOf(daemon: Daemon | "console"): Container {
  const containers = deploymentOf(daemon).spec.template.spec.containers;
  expect(containers.map((container) => container.name)).toEqual([daemon]);
  return containers[0] as Container;
}
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

describe("the Kubernetes manifests against the Kubernetes and KEDA schemas", () => {
  it("are all known kinds that validate", () => {
    expect(objects.length).toBeGreaterThan(10);
    expect(objects.map(schemaProblem).filter(Boolean)).toEqual([]);
  });

  it("catch a malformed field (the check is not vacuous)", () => {
    const api = deploymentOf("api");
    const broken = structuredClone(api);
    const container = broken.spec.template.spec.containers[0] as Container;
    (container.lifecycle as { preStop: { sleep: { seconds: unknown } } }).preStop.sleep.seconds = "5s";
    expect(schemaProblem(broken)).toMatch(/preStop\/sleep\/seconds must be integer/);
    const scaledObject = structuredClone(named("ScaledObject", "outbox-consumer")) as Manifest & {
      spec: { minReplicaCount: unknown };
    };
    scaledObject.spec.minReplicaCount = "two";
    expect(schemaProblem(scaledObject)).toMatch(/minReplicaCount must be integer/);
  });

  it("are exactly what the kustomizations list, with one image tag per daemon across both", () => {
    const kustomizations = all.filter(isKustomization) as unknown as (Manifest & {
      file: string;
      resources: string[];
      images: { name: string; newName: string; newTag: string }[];
    })[];
    expect(kustomizations.map((k) => k.file).sort()).toEqual([
      "kustomization.yaml",
      "migrate/kustomization.yaml",
    ]);
    const images = new Map<string, string>();
    for (const kustomization of kustomizations) {
      const dir = join(KUBERNETES_DIR, dirname(kustomization.file));
      const files = readdirSync(dir).filter(
        (file) => file.endsWith(".yaml") && file !== "kustomization.yaml",
      );
      expect(kustomization.resources.sort()).toEqual(files.sort());
      for (const image of kustomization.images) {
        const pinned = `${image.newName}:${image.newTag}`;
        expect(images.get(image.name) ?? pinned).toBe(pinned);
        images.set(image.name, pinned);
      }
    }
    const used = new Set(
      [...ofKind<DeploymentManifest>("Deployment"), ...ofKind<DeploymentManifest>("Job")].flatMap(
        (workload) => workload.spec.template.spec.containers.map((container) => container.image),
      ),
    );
    expect([...used].sort()).toEqual([...images.keys()].sort());
  });
});

describe("each daemon's Deployment", () => {
  for (const daemon of DAEMONS) {
    describe(daemon, () => {
      const deployment = deploymentOf(daemon);
      const container = containerOf(daemon);
      const environment = environmentOf(container);
      const pod = deployment.spec.template.spec;

      it("stops by the planner's rules: its own preStop and grace, 0 requests dropped, 0 drains cut", () => {
        const stopPlan = stopPlanOf(deployment);
        // The annotation is the daemon's real stop: its numbers are the environment's.
        expect({ drainMs: stopPlan.drainMs, longestRequestMs: stopPlan.longestRequestMs }).toEqual(
          stopOf[daemon](environment),
        );
        const given = {
          platform: "k8s" as const,
          preStopSeconds: container.lifecycle?.preStop?.sleep?.seconds ?? 0,
          terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds ?? Number.NaN,
        };
        const result = plan({ platform: "k8s", ...stopPlan, given });
        const recommendation = `pnpm plan recommends ${describeSettings(result.recommended)}`;
        expect(result.outcomes.given.requests.dropped, recommendation).toBe(0);
        expect(result.outcomes.given.drainsCut, recommendation).toBe(0);
        // Not merely enough: exactly the planner's numbers, so no pod waits longer than it must.
        expect(given).toEqual(result.recommended);
        // The daemon checks its drain against the real SIGTERM → SIGKILL window.
        expect(number(environment, "STOP_TIMEOUT_MS")).toBe(
          (given.terminationGracePeriodSeconds - given.preStopSeconds) * 1000,
        );
      });

      it("waits in preStop only for an endpoint some Service routes to", () => {
        const routed = ofKind<{ spec: { selector?: Record<string, string> } }>("Service").some((service) =>
          selects(service.spec.selector ?? {}, deployment.spec.template.metadata.labels),
        );
        expect(stopPlanOf(deployment).propagationMs > 0).toBe(routed);
      });

      it("sets only variables the daemon reads, which pass its start-up checks", () => {
        const names = (container.env ?? []).map((variable) => variable.name);
        const own = envNamesOf(daemon);
        expect(
          names.filter((name) => !own.has(name) && !isPlatformVariable(name) && name !== "DATABASE_URL"),
        ).toEqual([]);
        expect(
          container.env?.find((variable) => variable.name === "DATABASE_URL")?.valueFrom?.secretKeyRef,
        ).toEqual({
          name: "outbox-database",
          key: "url",
        });
        expect(startupProblems(daemon, environment)).toEqual([]);
      });

      it("is probed on the ops server: /livez for liveness and start-up, /readyz for readiness", () => {
        const opsPort = container.ports?.find((port) => port.name === "ops")?.containerPort;
        expect(opsPort).toBe(number(environment, "OPS_PORT"));
        expect(opsPort).toBe(settingsFor[daemon].opsPort.default);
        expect(container.startupProbe?.httpGet).toEqual({ path: "/livez", port: "ops" });
        expect(container.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "ops" });
        expect(container.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "ops" });
      });

      it("requests CPU and memory, and caps memory at its request", () => {
        expect(container.resources?.requests).toEqual({
          cpu: expect.any(String),
          memory: expect.any(String),
        });
        expect(container.resources?.limits?.memory).toBe(container.resources?.requests?.memory);
      });

      it("has a PodDisruptionBudget that lets one pod go at a time", () => {
        const budgets = ofKind<{
          spec: { maxUnavailable?: number; selector: { matchLabels: Record<string, string> } };
        }>("PodDisruptionBudget").filter((budget) =>
          selects(budget.spec.selector.matchLabels, deployment.spec.template.metadata.labels),
        );
        expect(budgets).toHaveLength(1);
        expect(budgets[0]?.spec.maxUnavailable).toBe(1);
      });
    });
  }
});

describe("the consumer's KEDA ScaledObject", () => {
  interface ScaledObjectManifest {
    spec: {
      scaleTargetRef: { name: string };
      minReplicaCount: number;
      maxReplicaCount: number;
      triggers: { type: string; authenticationRef?: { name: string }; metadata: Record<string, string> }[];
    };
  }
  const scaledObject = named<ScaledObjectManifest>("ScaledObject", "outbox-consumer");
  const environment = environmentOf(containerOf("consumer"));

  it("scales the consumer's Deployment, which sets no replica count of its own", () => {
    expect(scaledObject.spec.scaleTargetRef.name).toBe(deploymentOf("consumer").metadata.name);
    expect((deploymentOf("consumer").spec as { replicas?: number }).replicas).toBeUndefined();
    expect([scaledObject.spec.minReplicaCount, scaledObject.spec.maxReplicaCount]).toEqual([2, 10]);
  });

  it("on the depth of the consumer's own queue, waiting plus in flight, 10 × CONSUMER_CONCURRENCY per pod", () => {
    const [trigger, ...others] = scaledObject.spec.triggers;
    expect(others).toEqual([]);
    expect(trigger?.type).toBe("aws-sqs-queue");
    expect(trigger?.metadata.queueURL).toBe(environment.CONSUMER_QUEUE_URL);
    expect(trigger?.metadata.awsRegion).toBe(environment.AWS_REGION);
    expect(trigger?.metadata.scaleOnInFlight).toBe("true");
    expect(Number(trigger?.metadata.queueLength)).toBe(10 * number(environment, "CONSUMER_CONCURRENCY"));
    const authentication = named<{ spec: { podIdentity: { provider: string } } }>(
      "TriggerAuthentication",
      trigger?.authenticationRef?.name ?? "",
    );
    expect(authentication.spec.podIdentity.provider).toBe("aws");
  });
});

describe("the migration Job", () => {
  const job = named<DeploymentManifest & { spec: { backoffLimit: number; activeDeadlineSeconds: number } }>(
    "Job",
    "outbox-migrate",
  );
  it("runs the api image's `api migrate` (the outbox's set and the photo service's, which the deployed api checks for) with the daemons' database secret, once, bounded", () => {
    const [container] = job.spec.template.spec.containers;
    expect(container?.image).toBe(containerOf("api").image);
    expect((container as Container & { command: string[] }).command).toEqual([
      "node",
      "dist/main.js",
      "migrate",
    ]);
    expect(
      container?.env?.find((variable) => variable.name === "DATABASE_URL")?.valueFrom?.secretKeyRef,
    ).toEqual({
      name: "outbox-database",
      key: "url",
    });
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(0);
  });
});

describe("the pods' Kubernetes API tokens", () => {
  const workloads = [...ofKind<DeploymentManifest>("Deployment"), ...ofKind<DeploymentManifest>("Job")];

  it("are mounted into no pod: no daemon and no migration calls the Kubernetes API", () => {
    expect(workloads.map((workload) => workload.metadata.name).sort()).toEqual([
      "outbox-api",
      "outbox-console",
      "outbox-consumer",
      "outbox-migrate",
      "outbox-relay",
    ]);
    for (const workload of workloads) {
      const pod = workload.spec.template.spec;
      const account = named<{ automountServiceAccountToken?: boolean }>(
        "ServiceAccount",
        pod.serviceAccountName ?? "default",
      );
      // The pod's own setting wins over its service account's; Kubernetes mounts when neither says.
      const mounted = pod.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;
      expect({ [workload.metadata.name]: mounted }).toEqual({ [workload.metadata.name]: false });
      expect(account.automountServiceAccountToken).toBe(false);
    }
  });

  it("leave the AWS identities in place: IRSA mounts a token of its own for the relay and the consumer", () => {
    for (const daemon of ["relay", "consumer"] as const) {
      const account = named(
        "ServiceAccount",
        deploymentOf(daemon).spec.template.spec.serviceAccountName ?? "",
      );
      expect(account.metadata.annotations?.["eks.amazonaws.com/role-arn"]).toMatch(
        new RegExp(`^arn:aws:iam::\\d{12}:role/outbox-${daemon}$`),
      );
    }
  });
});

describe("the NetworkPolicies", () => {
  interface Peer {
    namespaceSelector?: { matchLabels?: Record<string, string> };
    podSelector?: { matchLabels?: Record<string, string> };
  }
  interface PolicyManifest {
    spec: {
      podSelector: { matchLabels?: Record<string, string> };
      policyTypes?: string[];
      ingress?: { from?: Peer[]; ports?: { port: string | number; protocol?: string }[] }[];
    };
  }
  const policies = ofKind<PolicyManifest>("NetworkPolicy");
  /** Who may open a connection to each port of the daemon's pods: "anyone", or the peers allowed. */
  function allowedIngress(daemon: Daemon | "console"): Map<string, Peer[] | "anyone"> {
    const labels = deploymentOf(daemon).spec.template.metadata.labels;
    const selecting = policies.filter((policy) => selects(policy.spec.podSelector.matchLabels ?? {}, labels));
    // Selected by an Ingress policy, a pod refuses whatever no rule allows.
    expect(selecting.some((policy) => policy.spec.policyTypes?.includes("Ingress"))).toBe(true);
    const allowed = new Map<string, Peer[] | "anyone">();
    for (const rule of selecting.flatMap((policy) => policy.spec.ingress ?? [])) {
      // A rule without ports opens every port: none of ours may be such a rule.
      expect(rule.ports?.length ?? 0).toBeGreaterThan(0);
      for (const { port } of rule.ports ?? []) {
        const before = allowed.get(String(port)) ?? [];
        const from = rule.from ?? [];
        allowed.set(String(port), from.length === 0 || before === "anyone" ? "anyone" : [...before, ...from]);
      }
    }
    return allowed;
  }
  const prometheus: Peer = {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
    podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
  };

  for (const daemon of DAEMONS) {
    it(`let only Prometheus reach the ${daemon}'s ops port, and nothing else but its API`, () => {
      const expected = new Map<string, Peer[] | "anyone">([["ops", [prometheus]]]);
      if (daemon === "api") expected.set("http", "anyone");
      expect(allowedIngress(daemon)).toEqual(expected);
      // The ports named are the container's, the ops one the daemon's OPS_PORT.
      const names = (containerOf(daemon).ports ?? []).map((port) => port.name);
      for (const port of expected.keys()) expect(names).toContain(port);
    });
  }

  it("let no pod reach the console: it is reached by a port-forward (through the kubelet)", () => {
    expect(allowedIngress("console")).toEqual(new Map([["ops", [prometheus]]]));
  });

  it("catch a rule that opens the ops port to every pod (the check is not vacuous)", () => {
    const policy = structuredClone(named<PolicyManifest>("NetworkPolicy", "outbox-ops"));
    const rule = policy.spec.ingress?.[0];
    if (!rule) throw new Error("outbox-ops has no rule");
    rule.from = [{ podSelector: {} }];
    const index = policies.findIndex((each) => each.metadata.name === "outbox-ops");
    policies[index] = policy;
    try {
      expect(allowedIngress("relay").get("ops")).not.toEqual([prometheus]);
    } finally {
      policies[index] = named<PolicyManifest>("NetworkPolicy", "outbox-ops");
    }
  });
});

describe("the console's Deployment", () => {
  const deployment = deploymentOf("console");
  const container = containerOf("console");
  const environment = environmentOf(container);

  it("no pod between uses (at most one), the console image, bound to every address with its operators from a Secret: it starts", () => {
    expect(deployment.spec.replicas).toBe(0);
    expect(container.image).toBe("outbox-console");
    expect(environment.CONSOLE_HOST).toBe("0.0.0.0");
    const users = (container.env ?? []).find((variable) => variable.name === "CONSOLE_USERS");
    expect(users?.valueFrom?.secretKeyRef).toEqual({ name: "outbox-console", key: "users" });
    // Every variable is the console's; its checks pass with the secrets it is given.
    const own = new Set(Object.values(consoleSettings).map((each) => each.env));
    for (const variable of container.env ?? []) expect(own).toContain(variable.name);
    const config = resolveConfig(consoleSettings, consoleProblems, {
      ...environment,
      DATABASE_URL: "postgres://console@db.internal/outbox?sslmode=require",
      CONSOLE_USERS: "ana:read-write:a-password-of-length",
    });
    expect(config.port).toBe(container.ports?.find((port) => port.name === "http")?.containerPort);
    // Without its secret it would refuse to start (exit 78): off loopback it needs credentials.
    expect(() =>
      resolveConfig(consoleSettings, consoleProblems, {
        ...environment,
        DATABASE_URL: "postgres://x@y/z?sslmode=require",
      }),
    ).toThrow(/CONSOLE_TOKEN: is required when CONSOLE_HOST is not loopback/);
  });

  it("is probed on its own port (it has no ops server), and reached through its Service", () => {
    expect(container.livenessProbe?.tcpSocket?.port).toBe("http");
    const service = named<{ spec: { selector: Record<string, string> } }>("Service", "outbox-console");
    expect(selects(service.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
  });
});

describe("the consumer's own settings", () => {
  const environment = environmentOf(containerOf("consumer"));

  it("names its handlers module, a JavaScript file in the image's working directory that your image adds", () => {
    // The runtime stage's WORKDIR, where the image's node runs and a `COPY` of your module lands.
    const dockerfile = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");
    const runtime = dockerfile.slice(dockerfile.indexOf(" AS runtime"));
    const workdir = runtime.match(/^WORKDIR (\S+)$/m)?.[1];
    expect(workdir).toBe("/app");
    const module = environment.CONSUMER_HANDLERS_MODULE ?? "";
    expect(posix.isAbsolute(module)).toBe(true);
    expect(module.startsWith(`${workdir}/`)).toBe(true);
    expect(module).toMatch(/\.m?js$/);
    // The target ships no handlers: the module is yours, in an image built FROM it.
    expect(dockerfile).not.toMatch(new RegExp(`COPY[^\\n]*${posix.basename(module)}`));
  });

  it("reads claim-checked payloads from the bucket the ConfigMap names, within the message's deadline", () => {
    expect(environment.CONSUMER_CLAIM_CHECK_BUCKET).toBe(configMap.data.CONSUMER_CLAIM_CHECK_BUCKET);
    expect(environment.CONSUMER_CLAIM_CHECK_BUCKET).toMatch(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/);
    // With a bucket, the start-up check holds the fetch under the message's deadline too.
    expect(startupProblems("consumer", environment)).toEqual([]);
    expect(
      startupProblems("consumer", {
        ...environment,
        // A fetch as long as the whole deadline: refused.
        CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS: String(
          environment.CONSUMER_HANDLER_TIMEOUT_MS ?? settingsFor.consumer.handlerTimeoutMs.default,
        ),
      }),
    ).toEqual([
      expect.stringMatching(
        /^CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS: .* must be less than CONSUMER_HANDLER_TIMEOUT_MS/,
      ),
    ]);
  });
});
