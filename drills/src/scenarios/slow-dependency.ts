import { waitUntil } from "@outbox/test-kit/process";
import { checkSlowDependency } from "../checks.js";
import type { DrillContext } from "../drill-context.js";
import { gearLinkOf, postPhotoRequest } from "../post-photos.js";
import type { ScenarioResult } from "../report.js";
import { startPhotoServiceRig } from "./photo-service.js";

const STUB_HANG_MS = 20_000;
const API_EQUIPMENT_TIMEOUT_MS = 10_000;

/**
 * The document's slow dependency: the equipment service does not answer for 20 s. The post still
 * succeeds (201) once the client's 10 s run out, with the link pending; once the stub recovers, the
 * reconciliation job links it — once.
 */
export async function runSlowDependencyDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const rig = await startPhotoServiceRig(context, "slow_dependency", {
    API_EQUIPMENT_TIMEOUT_MS: String(API_EQUIPMENT_TIMEOUT_MS),
    // Quick retries, so the drill sees the recovery within a second or two of it.
    API_RECONCILE_INTERVAL_MS: "500",
    API_RECONCILE_BACKOFF_BASE_MS: "500",
    API_RECONCILE_BACKOFF_MAX_MS: "2000",
  });
  try {
    const { stub, port } = rig;
    stub.setFault({ delayMs: STUB_HANG_MS });
    context.progress(`equipment stub answers only after ${STUB_HANG_MS} ms: posting a photo`);
    const post = await postPhotoRequest(port, "slow dependency");
    const call = post.id ? await stub.waitForRequest((request) => request.photoId === post.id) : null;
    stub.clearFault();
    let linked = false;
    if (post.id) {
      const id = post.id;
      await waitUntil(
        "reconciliation to link the pending gear",
        async () => {
          linked = (await gearLinkOf(port, id)) === "linked";
          return linked;
        },
        { alive: [rig.api], timeoutMs: 30_000 },
      );
    }
    const check = checkSlowDependency({
      stubHangMs: STUB_HANG_MS,
      equipmentTimeoutMs: API_EQUIPMENT_TIMEOUT_MS,
      status: post.outcome,
      gearLink: post.gearLink,
      elapsedMs: post.elapsedMs,
      stubReceivedMs: call?.timeoutHeader ? Number(call.timeoutHeader) : null,
      linkedAfterRecovery: linked,
      linksAtStub: post.id && stub.linkedPhotos().has(post.id) ? 1 : 0,
    });
    context.progress(`slow-dependency: ${check.result}`);
    return [
      {
        scenario: "slow-dependency",
        checks: [check],
        figures: {
          status: post.outcome,
          elapsedMs: Math.round(post.elapsedMs),
          stubReceivedMs: call?.timeoutHeader ?? null,
          stubCalls: stub.received.filter((request) => request.photoId === post.id).length,
          stubRepeats: stub.repeats,
        },
        durationMs: Math.round(post.elapsedMs),
      },
    ];
  } finally {
    await rig.close();
  }
}
