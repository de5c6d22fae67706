import { checkDeadline } from "../checks.js";
import type { DrillContext } from "../drill-context.js";
import { postPhotoRequest } from "../post-photos.js";
import type { ScenarioResult } from "../report.js";
import { startPhotoServiceRig } from "./photo-service.js";

const HEADER_MS = 3_000;
const API_EQUIPMENT_TIMEOUT_MS = 10_000;

/**
 * The document's deadline propagation: a client that waits 3 000 ms says so in
 * X-Request-Timeout-Ms; the equipment stub hangs. The post answers after ≈ 3 s, not the client's
 * fixed 10 s, and the stub received 3 000 ms minus the time spent upstream.
 */
export async function runDeadlineDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const rig = await startPhotoServiceRig(context, "deadline", {
    API_EQUIPMENT_TIMEOUT_MS: String(API_EQUIPMENT_TIMEOUT_MS),
  });
  try {
    const { stub, port } = rig;
    stub.setFault({ hang: true });
    context.progress(`equipment stub hangs: posting with X-Request-Timeout-Ms: ${HEADER_MS}`);
    const post = await postPhotoRequest(port, "deadline", { timeoutHeaderMs: HEADER_MS });
    const call = post.id ? await stub.waitForRequest((request) => request.photoId === post.id) : null;
    stub.clearFault();
    const upstreamMs = call ? Math.ceil(call.receivedAt - post.sentAt) : 0;
    const check = checkDeadline({
      headerMs: HEADER_MS,
      equipmentTimeoutMs: API_EQUIPMENT_TIMEOUT_MS,
      status: post.outcome,
      gearLink: post.gearLink,
      elapsedMs: post.elapsedMs,
      stubReceivedMs: call?.timeoutHeader ? Number(call.timeoutHeader) : null,
      upstreamMs,
    });
    context.progress(`deadline: ${check.result}`);
    return [
      {
        scenario: "deadline",
        checks: [check],
        figures: {
          status: post.outcome,
          elapsedMs: Math.round(post.elapsedMs),
          stubReceivedMs: call?.timeoutHeader ?? null,
          upstreamMeasuredByDrillMs: upstreamMs,
        },
        durationMs: Math.round(post.elapsedMs),
      },
    ];
  } finally {
    await rig.close();
  }
}
