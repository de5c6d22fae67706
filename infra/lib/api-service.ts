import { CfnParameter } from "aws-cdk-lib";
import * as ecs from "aws-cdk-lib/aws-ecs";
import type { Construct } from "constructs";
import { type ApiBudget, apiBudget } from "./budget.js";
import { checkedDaemonService, type SharedServiceProps } from "./checked-daemon-service.js";
import type { DaemonService } from "./daemon-service.js";
import type { DaemonTelemetry } from "./daemon-telemetry.js";
import { ReconcileSchedule } from "./reconcile-schedule.js";
import type { ApiServiceOptions } from "./stack-props.js";

export interface ApiServiceProps {
  readonly options: ApiServiceOptions;
  /** The image comes from `options` or the ApiImage parameter. */
  readonly shared: Omit<SharedServiceProps, "image">;
  readonly startServices: boolean;
  /** Its collector sidecar (daemon-telemetry.ts); undefined: none. */
  readonly telemetry: DaemonTelemetry | undefined;
}

export interface ApiService {
  readonly budget: ApiBudget;
  readonly daemon: DaemonService;
  /** The service's image: its one-off tasks (reconcile, the migration) run it too. */
  readonly image: ecs.ContainerImage;
  /** The scheduled `api reconcile` task; undefined while the services are not started. */
  readonly reconcile: ReconcileSchedule | undefined;
}

/**
 * The photo service and its scheduled reconciliation. The service talks to Postgres and the
 * equipment service only: its task role gets no policy but its collector sidecar's.
 */
export function apiService(
  scope: Construct,
  { options: apiOptions, shared, startServices, telemetry }: ApiServiceProps,
): ApiService {
  const budget = apiBudget(
    apiOptions.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: apiOptions.drainTimeoutMs },
  );
  const image =
    apiOptions.image ??
    ecs.ContainerImage.fromRegistry(
      new CfnParameter(scope, "ApiImage", {
        type: "String",
        description: "Photo service image URI (the Dockerfile's `api` target)",
      }).valueAsString,
    );
  const { daemon } = checkedDaemonService(
    scope,
    "Api",
    "api",
    { ...shared, image },
    {
      budget,
      options: apiOptions,
      computed: {
        API_DRAIN_TIMEOUT_MS: String(budget.drainTimeoutMs),
        API_PORT: String(budget.port),
        API_LB_IDLE_TIMEOUT_MS: String(budget.loadBalancerIdleTimeoutSeconds * 1000),
        API_KEEP_ALIVE_TIMEOUT_MS: String(budget.keepAliveTimeoutMs),
        API_EQUIPMENT_URL: apiOptions.equipmentUrl,
        API_PHOTO_TOPIC: apiOptions.photoTopic ?? "photos",
        // The scheduled task below owns reconciliation. With the loop on as well, every replica
        // would poll too: the load on Postgres and the equipment service would grow with the
        // task count, and the cadence would be set in two places.
        API_RECONCILE_INTERVAL_MS: "0",
      },
      desiredCount: startServices ? (apiOptions.desiredCount ?? 2) : 0,
      telemetry,
    },
  );
  const reconcile = startServices
    ? new ReconcileSchedule(scope, "ApiReconcile", {
        api: daemon,
        image,
        databaseUrlSecret: shared.databaseUrlSecret,
        ...(shared.databaseUrlSecretField ? { databaseUrlSecretField: shared.databaseUrlSecretField } : {}),
        vpcSubnets: shared.vpcSubnets,
        ...(apiOptions.reconcileEvery ? { every: apiOptions.reconcileEvery } : {}),
      })
    : undefined;
  return { budget, daemon, image, reconcile };
}
