import { Deadline, DeadlineExceededError, deadlineFetch } from "@outbox/client";

export interface GearLink {
  readonly photoId: string;
  readonly gearIds: readonly string[];
}

export type LinkOutcome = { readonly linked: true } | { readonly linked: false; readonly reason: string };

export interface EquipmentClient {
  /**
   * Asks the equipment service to link the gear, bounded by the earlier of `deadline` and the
   * client's own timeout. Never throws: a failure is an outcome, and the link stays pending.
   */
  link(link: GearLink, deadline?: Deadline): Promise<LinkOutcome>;
}

export interface EquipmentClientSettings {
  readonly baseUrl: string;
  /** The internal HTTP client's limit per call (the document's 10 s). */
  readonly timeoutMs: number;
}

export function createEquipmentClient(settings: EquipmentClientSettings): EquipmentClient {
  const url = new URL("links", settings.baseUrl.endsWith("/") ? settings.baseUrl : `${settings.baseUrl}/`);
  return {
    async link(link, parent) {
      const own = Deadline.after(settings.timeoutMs);
      const deadline = parent ? parent.min(own) : own;
      try {
        const response = await deadlineFetch(deadline, url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            // The photo id: a retry of the same link (the request's own, then reconciliation's) is
            // recognised by the equipment service instead of linking the gear twice.
            "idempotency-key": link.photoId,
          },
          body: JSON.stringify({ photoId: link.photoId, gearIds: link.gearIds }),
        });
        // Read the body either way, so the socket goes back to the pool.
        await response.arrayBuffer();
        return response.ok ? { linked: true } : { linked: false, reason: `HTTP ${response.status}` };
      } catch (error) {
        if (deadline.aborted || error instanceof DeadlineExceededError) {
          return { linked: false, reason: "deadline exceeded" };
        }
        return { linked: false, reason: error instanceof Error ? error.message : String(error) };
      } finally {
        if (deadline !== own) deadline.dispose();
        own.dispose();
      }
    },
  };
}
