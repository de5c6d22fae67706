import { CPU_ARCHITECTURES, type CpuArchitectureName, isCpuArchitectureName } from "./cpu-architecture.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";

/** A context value as bin/app.ts reads it: a non-empty string, or absent. */
export type ContextReader = (key: string) => string | undefined;

/**
 * `-c key=value` / `--context key=value` pairs of a direct run (`pnpm --filter @outbox/infra synth
 * -c vpcId=…`). The CDK CLI passes its context through CDK_CONTEXT_JSON instead, which App reads itself.
 */
export function contextArguments(argv: readonly string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index];
    if (flag !== "-c" && flag !== "--context") continue;
    const pair = argv[++index] ?? "";
    const equals = pair.indexOf("=");
    if (equals <= 0) throw new Error(`${flag} ${JSON.stringify(pair)}: expected key=value`);
    context[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return context;
}

function list(value: string | undefined): string[] | undefined {
  return value
    ?.split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function flag(context: ContextReader, key: string): boolean | undefined {
  const value = context(key);
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false")
    throw new Error(`${key} must be true or false, got ${JSON.stringify(value)}`);
  return value === "true";
}

function ratio(context: ContextReader, key: string): number | undefined {
  const value = context(key);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!(number >= 0 && number <= 1))
    throw new Error(`${key} must be a number from 0 to 1, got ${JSON.stringify(value)}`);
  return number;
}

function cpuArchitecture(value: string | undefined): CpuArchitectureName | undefined {
  if (value === undefined || isCpuArchitectureName(value)) return value;
  throw new Error(
    `cpuArchitecture must be ${Object.keys(CPU_ARCHITECTURES).join(" or ")}, got ${JSON.stringify(value)}`,
  );
}

/**
 * The stack's props from the app's context values (documented in docs/deployment.md, "Context
 * values"). Malformed values throw with the key's name; the stack checks what they mean together.
 */
export function stackPropsFromContext(context: ContextReader): OutboxWorkersStackProps {
  const email = context("alarmEmail");
  const databaseSecurityGroupId = context("databaseSecurityGroupId");
  const handlersModule = context("consumerHandlersModule");
  const consumerName = context("consumerName");
  const handlersInImage = flag(context, "consumerHandlersInImage");
  // The photo service is deployed once it has an equipment service to talk to (`-c equipmentUrl=…`).
  const equipmentUrl = context("equipmentUrl");
  const internetFacing = flag(context, "internetFacing");
  const certificateArn = context("certificateArn");
  const databaseUrlSecretKeyArn = context("databaseUrlSecretKeyArn");
  const natGateways = context("natGateways");
  const vpcId = context("vpcId");
  const subnetIds = list(context("subnetIds"));
  const loadBalancerSubnetIds = list(context("loadBalancerSubnetIds"));
  const architecture = cpuArchitecture(context("cpuArchitecture"));
  const traces = flag(context, "traces");
  const traceSampleRatio = ratio(context, "traceSampleRatio");
  const maximumMessageSize = context("maximumMessageSize");
  if (maximumMessageSize !== undefined && !/^\d+$/.test(maximumMessageSize)) {
    throw new Error(
      `maximumMessageSize must be a whole number of bytes (1024 to 1048576), got ${JSON.stringify(maximumMessageSize)}`,
    );
  }
  const claimCheckWriterRoleArns = list(context("claimCheckWriterRoleArns"));
  const claimCheckExpirationDays = context("claimCheckExpirationDays");
  if (claimCheckExpirationDays !== undefined && !/^[1-9]\d*$/.test(claimCheckExpirationDays)) {
    throw new Error(
      `claimCheckExpirationDays must be a whole number of days, got ${JSON.stringify(claimCheckExpirationDays)}`,
    );
  }
  if (!vpcId && (subnetIds || loadBalancerSubnetIds)) {
    throw new Error("subnetIds and loadBalancerSubnetIds need vpcId: the VPC they belong to");
  }
  if (vpcId && !subnetIds) throw new Error("vpcId needs subnetIds: the private subnets the tasks run in");
  if (!equipmentUrl && (internetFacing !== undefined || certificateArn)) {
    throw new Error(
      "internetFacing and certificateArn shape the photo service's ALB: they need equipmentUrl",
    );
  }
  return {
    fifo: flag(context, "fifo") ?? false,
    ...(maximumMessageSize ? { maximumMessageSize: Number(maximumMessageSize) } : {}),
    ...(claimCheckWriterRoleArns ? { claimCheckWriterRoleArns } : {}),
    ...(claimCheckExpirationDays ? { claimCheckExpirationDays: Number(claimCheckExpirationDays) } : {}),
    ...(email ? { alarmEmail: email } : {}),
    ...(databaseSecurityGroupId ? { databaseSecurityGroupId } : {}),
    ...(handlersModule || consumerName || handlersInImage
      ? {
          consumer: {
            ...(handlersModule ? { handlersModule } : {}),
            ...(handlersInImage ? { handlersInImage } : {}),
            ...(consumerName ? { name: consumerName } : {}),
          },
        }
      : {}),
    ...(equipmentUrl
      ? {
          api: {
            equipmentUrl,
            ...(internetFacing === undefined ? {} : { internetFacing }),
            ...(certificateArn ? { certificateArn } : {}),
          },
        }
      : {}),
    ...(databaseUrlSecretKeyArn ? { databaseUrlSecretKeyArn } : {}),
    ...(flag(context, "databaseSecretRotation") ? { databaseSecretRotation: true } : {}),
    ...(natGateways ? { natGateways: Number(natGateways) } : {}),
    ...(vpcId && subnetIds
      ? {
          existingNetwork: {
            vpcId,
            taskSubnetIds: subnetIds,
            ...(loadBalancerSubnetIds ? { loadBalancerSubnetIds } : {}),
          },
        }
      : {}),
    ...(architecture ? { cpuArchitecture: architecture } : {}),
    ...(traces !== undefined || traceSampleRatio !== undefined
      ? {
          telemetry: {
            ...(traces === undefined ? {} : { traces }),
            ...(traceSampleRatio === undefined ? {} : { traceSampleRatio }),
          },
        }
      : {}),
    // The first deployment: everything but running tasks, so the migration can run first.
    startServices: flag(context, "startServices") ?? true,
  };
}
