import type { Message } from "@aws-sdk/client-sqs";
import type { Deadline } from "@outbox/client";
import { receiptOf } from "../message/receipt.js";
import type { Lease, VisibilityHeartbeat } from "../queue/heartbeat.js";

export interface FifoGroupsOptions {
  /**
   * Handles a message whose turn has come (never rejects). Resolves how long the rest of its group
   * is held — the visibility, in seconds, to give the messages waiting behind it — or undefined
   * when the group goes on.
   */
  readonly run: (message: Message, leaseExpiresAt: number) => Promise<number | undefined>;
  /** Releases messages untouched with this visibility, in order, and counts them (never rejects). */
  readonly releaseUntouched: (messages: readonly Message[], visibilitySeconds: number) => Promise<void>;
  readonly heartbeat: VisibilityHeartbeat;
  /** Caps the lease of a message waiting behind `ahead` others (each bounded by its own deadline). */
  readonly waitDeadline: (ahead: number) => Deadline;
}

interface Waiting {
  readonly message: Message;
  /** Kept alive by the heartbeat while the message waits, so its lease does not run out in our hands. */
  readonly lease: Lease;
}

/**
 * FIFO queues: one line of messages per message group. A group's messages run one after another in the order
 * received — SQS returns a group's messages in order within a receive and hands out no more of a
 * group while one of it is in flight — and different groups run side by side. A message that ends
 * in a retry or a release holds its group: the messages waiting behind it are released untouched
 * with the same visibility, so SQS redelivers them after it, in order.
 */
export class FifoGroups {
  readonly #options: FifoGroupsOptions;
  /** Per group with a message running: the messages waiting behind it, in receive order. */
  readonly #groups = new Map<string, Waiting[]>();

  constructor(options: FifoGroupsOptions) {
    this.#options = options;
  }

  /**
   * Puts a received message in its group's line. Returns the group's work when the message is the
   * first of its group in hand (the caller tracks it until it resolves), undefined when it waits.
   */
  add(group: string, message: Message, leaseExpiresAt: number): Promise<void> | undefined {
    const waiting = this.#groups.get(group);
    if (waiting === undefined) {
      const line: Waiting[] = [];
      this.#groups.set(group, line);
      return this.#run(group, line, message, leaseExpiresAt);
    }
    const lease: Lease = {
      ...receiptOf(message),
      deadline: this.#options.waitDeadline(waiting.length + 1),
      expiresAt: leaseExpiresAt,
    };
    this.#options.heartbeat.track(lease);
    waiting.push({ message, lease });
    return undefined;
  }

  async #run(group: string, line: Waiting[], first: Message, leaseExpiresAt: number): Promise<void> {
    let next: { message: Message; leaseExpiresAt: number } | undefined = { message: first, leaseExpiresAt };
    while (next !== undefined) {
      const holdSeconds = await this.#options.run(next.message, next.leaseExpiresAt);
      if (holdSeconds !== undefined && line.length > 0) {
        const held = line.splice(0);
        for (const entry of held) this.#endWait(entry);
        await this.#options.releaseUntouched(
          held.map((entry) => entry.message),
          holdSeconds,
        );
      }
      const waiting = line.shift();
      if (waiting === undefined) {
        next = undefined;
      } else {
        this.#endWait(waiting);
        // The lease as the heartbeat left it.
        next = { message: waiting.message, leaseExpiresAt: waiting.lease.expiresAt };
      }
    }
    this.#groups.delete(group);
  }

  #endWait(entry: Waiting): void {
    this.#options.heartbeat.untrack(entry.lease);
    entry.lease.deadline.dispose();
  }
}
