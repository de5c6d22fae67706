/**
 * pg-transactional-outbox 0.5.7's replication concurrency controllers, by name, so the bench can
 * try each and keep the fastest (its polling listener has none: it orders on the SQL side).
 */
import {
  createReplicationFullConcurrencyController,
  createReplicationMultiConcurrencyController,
  createReplicationMutexConcurrencyController,
  createReplicationSegmentMutexConcurrencyController,
  createReplicationSemaphoreConcurrencyController,
  type ReplicationConcurrencyController,
} from "pg-transactional-outbox";

export const PTO_CONTROLLERS = ["mutex", "semaphore", "segment-mutex", "multi", "full"] as const;
export type PtoController = (typeof PTO_CONTROLLERS)[number];

/** How the report names each controller, with the parallelism it ran at. */
export function ptoControllerLabel(controller: PtoController, parallelism: number): string {
  switch (controller) {
    case "mutex":
      return "mutex, its default: one message at a time";
    case "semaphore":
      return `semaphore, ${parallelism} at a time`;
    case "segment-mutex":
      return "segment mutex: one at a time per ordering key";
    case "multi":
      return `multi: parallel events by a semaphore of ${parallelism}, sequential ones by segment mutex`;
    case "full":
      return "full concurrency: every message at once";
  }
}

/** `parallelism` bounds the semaphores: the handler pool's connections, which each message holds. */
export function ptoController(
  controller: PtoController,
  parallelism: number,
): ReplicationConcurrencyController {
  switch (controller) {
    case "mutex":
      return createReplicationMutexConcurrencyController();
    case "semaphore":
      return createReplicationSemaphoreConcurrencyController(parallelism);
    case "segment-mutex":
      return createReplicationSegmentMutexConcurrencyController();
    case "multi":
      return createReplicationMultiConcurrencyController(
        (message) => (message.concurrency === "sequential" ? "segment-mutex" : "semaphore"),
        { maxSemaphoreParallelism: parallelism },
      );
    case "full":
      return createReplicationFullConcurrencyController();
  }
}
