import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import type { DaemonProcess } from "@outbox/test-kit/process";
import { apiPort, DaemonFleet } from "@outbox/test-kit/process";
import { apiEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { type DrillEnvironment, prepareDrillEnvironment } from "../drill-environment.js";

/** One photo service process on a drill database of its own, with an equipment stub to fault. */
export interface PhotoServiceRig {
  readonly environment: DrillEnvironment;
  readonly stub: EquipmentStub;
  readonly api: DaemonProcess;
  readonly port: number;
  close(): Promise<void>;
}

export async function startPhotoServiceRig(
  context: DrillContext,
  label: string,
  overrides: Record<string, string> = {},
): Promise<PhotoServiceRig> {
  const environment = await prepareDrillEnvironment(context, { label });
  const stub = await startEquipmentStub();
  const fleet = new DaemonFleet();
  const close = async () => {
    await fleet.killAll();
    await stub.close();
    await environment.close();
  };
  try {
    const api = fleet.api("api", apiEnv(environment, stub.url, overrides));
    return { environment, stub, api, port: await apiPort(api), close };
  } catch (error) {
    await close();
    throw error;
  }
}
