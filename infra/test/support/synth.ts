import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { OutboxWorkersStack } from "../../lib/outbox-workers-stack.js";
import type { OutboxWorkersStackProps } from "../../lib/stack-props.js";

export interface Synthesized {
  readonly stack: OutboxWorkersStack;
  readonly template: Template;
}

/** Synthesizes the stack in memory, offline, the way bin/app.ts does (no lookups, no assets). */
export function synth(props: OutboxWorkersStackProps = {}): Synthesized {
  const app = new App();
  const stack = new OutboxWorkersStack(app, "Test", props);
  return { stack, template: Template.fromStack(stack) };
}

type Json = unknown;

export interface FoundStatement {
  /** Logical id of the resource and the property path to the statement. */
  readonly where: string;
  readonly statement: Record<string, Json>;
}

/** Every policy statement anywhere in the template: roles, policies, queue and topic policies, … */
export function policyStatements(template: Template): FoundStatement[] {
  const found: FoundStatement[] = [];
  const walk = (node: Json, where: string): void => {
    if (Array.isArray(node)) {
      for (const [index, child] of node.entries()) walk(child, `${where}[${index}]`);
      return;
    }
    if (node === null || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "Statement" && Array.isArray(value)) {
        for (const [index, statement] of value.entries()) {
          found.push({ where: `${where}.Statement[${index}]`, statement: statement as Record<string, Json> });
        }
      } else {
        walk(value, `${where}.${key}`);
      }
    }
  };
  const resources = template.toJSON().Resources as Record<string, Json>;
  for (const [logicalId, resource] of Object.entries(resources)) walk(resource, logicalId);
  return found;
}

/** Every literal string inside a value, through intrinsic functions (Fn::Join pieces, …). */
export function stringsIn(value: Json): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(stringsIn);
  return [];
}

/** What a collector sidecar may send to X-Ray: these two actions exist only on resource `*`. */
export const XRAY_WRITE_ACTIONS = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"];

/**
 * The one wildcard granted on purpose (telemetry-sidecar.ts): an Allow of exactly the X-Ray write
 * actions on `*`, with nothing else in the statement. X-Ray has no resource-level permissions.
 */
function isXrayWrite(statement: Record<string, Json>): boolean {
  return (
    JSON.stringify(Object.keys(statement).sort()) === JSON.stringify(["Action", "Effect", "Resource"]) &&
    statement.Effect === "Allow" &&
    JSON.stringify(statement.Action) === JSON.stringify(XRAY_WRITE_ACTIONS) &&
    statement.Resource === "*"
  );
}

/**
 * The other wildcard granted on purpose (claim-check-bucket.ts): the objects of one of the stack's
 * buckets, `<bucket ARN>/*`. Object keys are the payloads' SHA-256, unknowable in advance; the
 * bucket itself is named exactly.
 */
function isObjectsOfStackBucket(resource: Json): boolean {
  const join = (resource as { "Fn::Join"?: [string, Json[]] } | null)?.["Fn::Join"];
  if (!Array.isArray(join) || join[0] !== "" || !Array.isArray(join[1]) || join[1].length !== 2) return false;
  const [bucketArn, objects] = join[1];
  const getAtt = (bucketArn as { "Fn::GetAtt"?: [string, string] } | null)?.["Fn::GetAtt"];
  return objects === "/*" && Array.isArray(getAtt) && getAtt[1] === "Arn";
}

/**
 * Statements that allow with a wildcard action, resource or principal, and any that uses
 * NotAction/NotResource/NotPrincipal; the X-Ray write statement and a bucket's objects aside
 * (isXrayWrite, isObjectsOfStackBucket). A Deny's
 * wildcards only widen what is refused (enforceSSL denies every action to everyone without TLS),
 * so they grant nothing.
 */
export function wildcardProblems(template: Template): string[] {
  return policyStatements(template).flatMap(({ where, statement }) => {
    const problems: string[] = [];
    if (isXrayWrite(statement)) return problems;
    for (const key of ["NotAction", "NotResource", "NotPrincipal"]) {
      if (key in statement) problems.push(`${where}: ${key}`);
    }
    if (statement.Effect === "Deny") return problems;
    for (const action of stringsIn(statement.Action)) {
      if (action.includes("*")) problems.push(`${where}: action ${action}`);
    }
    const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
    for (const resource of stringsIn(resources.filter((one) => !isObjectsOfStackBucket(one)))) {
      if (resource.includes("*")) problems.push(`${where}: resource ${resource}`);
    }
    for (const principal of stringsIn(statement.Principal)) {
      if (principal === "*") problems.push(`${where}: principal *`);
    }
    return problems;
  });
}

export interface ContainerDefinition {
  Name: string;
  Environment?: { Name: string; Value: Json }[];
  Secrets?: { Name: string; ValueFrom: Json }[];
  StopTimeout?: number;
  [key: string]: Json;
}

/** The first container definition named `name` (relay, consumer, api: one of each). */
export function container(template: Template, name: string): ContainerDefinition {
  const taskDefinitions = template.findResources("AWS::ECS::TaskDefinition");
  for (const definition of Object.values(taskDefinitions)) {
    const containers = (definition.Properties.ContainerDefinitions ?? []) as ContainerDefinition[];
    const match = containers.find((candidate) => candidate.Name === name);
    if (match) return match;
  }
  throw new Error(`no container named ${name}`);
}

/** The container named `name` in the task definition of the daemon's container (`relay`, `consumer`, `api`). */
export function containerBeside(template: Template, daemon: string, name: string): ContainerDefinition {
  const taskDefinitions = template.findResources("AWS::ECS::TaskDefinition");
  for (const definition of Object.values(taskDefinitions)) {
    const containers = (definition.Properties.ContainerDefinitions ?? []) as ContainerDefinition[];
    if (!containers.some((candidate) => candidate.Name === daemon)) continue;
    const match = containers.find((candidate) => candidate.Name === name);
    if (match) return match;
  }
  throw new Error(`no container named ${name} beside ${daemon}`);
}

/** A container's environment as a map (values may be intrinsic functions). */
export function environmentOf(definition: ContainerDefinition): Record<string, Json> {
  return Object.fromEntries((definition.Environment ?? []).map((entry) => [entry.Name, entry.Value]));
}
