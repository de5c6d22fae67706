import type { StopSchedule } from "./stop-schedule.js";

/** What the replicas serve: how long one request runs, and how long the app waits for it after SIGTERM. */
export interface Workload {
  /** Ticks one request runs; a request routed in tick t occupies ticks t … t + work − 1. */
  readonly work: number;
  /**
   * Ticks the app waits for its in-flight work after SIGTERM before it gives up on it and exits (its
   * own drain timeout). Absent: it waits as long as the platform lets it, as in the source document.
   */
  readonly drain?: number;
}

type Phase = "ready" | "terminating" | "stopped";

/** What one replica did in the current tick; reset at the start of each. */
interface TickCounts {
  accepted: number;
  refused: number;
  cut: number;
  served: number;
}

interface Replica {
  readonly name: string;
  phase: Phase;
  accepting: boolean;
  removeAt: number;
  sigtermAt: number;
  killAt: number;
  disconnectAt: number;
  /** Ticks left of each request in flight. */
  inFlight: number[];
  thisTick: TickCounts;
}

/**
 * Where a replica stands in one tick, at the moment the tick's requests are routed: `serving` (on
 * the endpoint list and accepting), `refusing` (still on the list but no longer accepting: the
 * accident window), `leaving` (off the list, the process still running: a preStop wait or a drain),
 * `gone` (off the list and stopped).
 */
export type ReplicaState = "serving" | "refusing" | "leaving" | "gone";

/** One replica in one tick: its state and what happened to the requests it was sent or held. */
export interface ReplicaTick {
  readonly replica: string;
  readonly state: ReplicaState;
  /** Requests routed to it and taken in. */
  readonly accepted: number;
  /** Requests routed to it that it refused. */
  readonly refused: number;
  /** Requests in flight it lost: SIGKILL, the load balancer's disconnect, its own drain timeout. */
  readonly cut: number;
  /** Requests that finished on it. */
  readonly served: number;
}

/** One tick of the whole fleet, for the per-replica timeline. */
export interface TickFrame {
  readonly at: number;
  readonly replicas: readonly ReplicaTick[];
  /** Requests that found the endpoint list empty. */
  readonly unroutable: number;
}

/** Something that happened on the logical clock, for the event log. */
export type RaceEvent =
  | { readonly kind: "stop-begins"; readonly removeAt: number; readonly sigtermAt: number }
  | { readonly kind: "removed" }
  | { readonly kind: "disconnected"; readonly cut: number }
  | { readonly kind: "sigterm"; readonly inFlight: number }
  | { readonly kind: "drained" }
  | { readonly kind: "drain-timeout"; readonly abandoned: number }
  | { readonly kind: "killed"; readonly cut: number }
  | { readonly kind: "refused" }
  | { readonly kind: "no-endpoints"; readonly lost: number };

export interface LogEntry {
  readonly at: number;
  /** The replica it happened to; absent for the endpoint list as a whole. */
  readonly replica?: string;
  readonly event: RaceEvent;
}

/** Where every request ended. `dropped` is the sum of the ways to lose one. */
export interface RaceCounts {
  readonly served: number;
  readonly dropped: number;
  /** Routed to a replica still on the endpoint list that had stopped accepting: the race lost. */
  readonly refused: number;
  /** Arrived while the endpoint list was empty (the last replica stopping). */
  readonly unroutable: number;
  /** In flight when SIGKILL landed. */
  readonly cutBySigkill: number;
  /** In flight when the load balancer closed the replica's connections. */
  readonly cutByLoadBalancer: number;
  /** In flight when the app's own drain timeout gave up on them. */
  readonly abandonedByDrain: number;
  /** Replicas SIGKILLed while they still held work: each is a drain the platform cut short. */
  readonly drainsCut: number;
}

const NEVER = -1;

/**
 * The source document's simulator: replicas behind an endpoint list, requests routed round-robin on
 * a logical clock, and the race between leaving that list and stopping the process. Deterministic:
 * the same calls give the same counts and the same log.
 */
export class TerminationRace {
  private now = 0;
  private roundRobin = 0;
  private readonly replicas: Replica[] = [];
  private readonly entries: LogEntry[] = [];
  private readonly tickFrames: TickFrame[] = [];
  private unroutableThisTick = 0;
  private counts = {
    served: 0,
    refused: 0,
    unroutable: 0,
    cutBySigkill: 0,
    cutByLoadBalancer: 0,
    abandonedByDrain: 0,
    drainsCut: 0,
  };

  constructor(
    private readonly workload: Workload,
    replicaCount: number,
  ) {
    for (let i = 1; i <= replicaCount; i++) {
      this.replicas.push({
        name: `pod-${i}`,
        phase: "ready",
        accepting: true,
        removeAt: NEVER,
        sigtermAt: NEVER,
        killAt: NEVER,
        disconnectAt: NEVER,
        inFlight: [],
        thisTick: { accepted: 0, refused: 0, cut: 0, served: 0 },
      });
    }
  }

  get time(): number {
    return this.now;
  }

  get log(): readonly LogEntry[] {
    return this.entries;
  }

  /** Every tick run so far, each replica's state and counts in it. */
  get frames(): readonly TickFrame[] {
    return this.tickFrames;
  }

  get result(): RaceCounts {
    const c = this.counts;
    const dropped = c.refused + c.unroutable + c.cutBySigkill + c.cutByLoadBalancer + c.abandonedByDrain;
    return { ...c, dropped };
  }

  /**
   * Where traffic goes now. It looks only at the removal time, never at whether the replica still
   * accepts or even runs: the list belongs to the control plane, which learns of a stop late.
   */
  endpoints(): string[] {
    return this.replicas
      .filter((replica) => replica.removeAt === NEVER || this.now < replica.removeAt)
      .map((replica) => replica.name);
  }

  /**
   * Starts stopping a ready replica: schedules its removal, its SIGTERM, its SIGKILL (and, behind a
   * load balancer that drains, the moment it closes the connections). Nothing happens yet; only the
   * order of these times decides what is lost.
   */
  terminate(name: string, schedule: StopSchedule): void {
    const replica = this.replicas.find((candidate) => candidate.name === name && candidate.phase === "ready");
    if (!replica) return;
    replica.phase = "terminating";
    replica.removeAt = this.now + schedule.removeAfter;
    replica.sigtermAt = this.now + schedule.sigtermAfter;
    replica.killAt = this.now + schedule.killAfter;
    replica.disconnectAt =
      schedule.disconnectAfter === undefined ? NEVER : this.now + schedule.disconnectAfter;
    this.record(replica.name, {
      kind: "stop-begins",
      removeAt: replica.removeAt,
      sigtermAt: replica.sigtermAt,
    });
  }

  /**
   * One tick: the lifecycle events due now first, then `requests` routed, then the work advanced.
   * The order is the point: applied after routing, a SIGTERM would let the requests of its own tick
   * in, and the drops that prove the race would vanish.
   */
  tick(requests: number): void {
    for (const replica of this.replicas) replica.thisTick = { accepted: 0, refused: 0, cut: 0, served: 0 };
    this.unroutableThisTick = 0;
    this.lifecycleStep();
    const states = this.states();
    this.route(requests);
    this.advance();
    this.tickFrames.push({
      at: this.now,
      replicas: this.replicas.map((replica, i) => ({
        replica: replica.name,
        state: states[i] ?? "gone",
        ...replica.thisTick,
      })),
      unroutable: this.unroutableThisTick,
    });
    this.now++;
  }

  private states(): ReplicaState[] {
    const routed = new Set(this.endpoints());
    return this.replicas.map((replica) => {
      if (routed.has(replica.name)) return replica.accepting ? "serving" : "refusing";
      return replica.phase === "stopped" ? "gone" : "leaving";
    });
  }

  private lifecycleStep(): void {
    for (const replica of this.replicas) {
      if (replica.phase !== "terminating") continue;
      if (this.now === replica.removeAt) this.record(replica.name, { kind: "removed" });
      if (this.now === replica.disconnectAt) {
        const cut = replica.inFlight.length;
        this.counts.cutByLoadBalancer += cut;
        replica.thisTick.cut += cut;
        replica.inFlight = [];
        this.record(replica.name, { kind: "disconnected", cut });
      }
      if (this.now === replica.sigtermAt) {
        // SIGTERM stops intake only; what is in flight keeps running.
        replica.accepting = false;
        this.record(replica.name, { kind: "sigterm", inFlight: replica.inFlight.length });
      }
      if (!replica.accepting && replica.inFlight.length === 0) {
        // Drained: the process exits on its own without waiting for the grace to run out.
        replica.phase = "stopped";
        this.record(replica.name, { kind: "drained" });
        continue;
      }
      if (
        !replica.accepting &&
        this.workload.drain !== undefined &&
        this.now >= replica.sigtermAt + this.workload.drain
      ) {
        const abandoned = replica.inFlight.length;
        this.counts.abandonedByDrain += abandoned;
        replica.thisTick.cut += abandoned;
        replica.inFlight = [];
        replica.phase = "stopped";
        this.record(replica.name, { kind: "drain-timeout", abandoned });
        continue;
      }
      if (this.now >= replica.killAt) {
        const cut = replica.inFlight.length;
        this.counts.cutBySigkill += cut;
        replica.thisTick.cut += cut;
        if (cut > 0) this.counts.drainsCut++;
        replica.inFlight = [];
        replica.phase = "stopped";
        this.record(replica.name, { kind: "killed", cut });
      }
    }
  }

  private route(requests: number): void {
    const endpoints = this.endpoints();
    if (endpoints.length === 0) {
      this.counts.unroutable += requests;
      this.unroutableThisTick += requests;
      if (requests > 0) this.record(undefined, { kind: "no-endpoints", lost: requests });
      return;
    }
    for (let i = 0; i < requests; i++) {
      const name = endpoints[this.roundRobin % endpoints.length];
      this.roundRobin++;
      const replica = this.replicas.find((candidate) => candidate.name === name);
      if (!replica?.accepting) {
        // Still on the list, no longer accepting: the request the race costs.
        this.counts.refused++;
        if (replica) {
          replica.thisTick.refused++;
          this.record(replica.name, { kind: "refused" });
        }
        continue;
      }
      replica.thisTick.accepted++;
      replica.inFlight.push(this.workload.work);
    }
  }

  private advance(): void {
    for (const replica of this.replicas) {
      const rest: number[] = [];
      for (const left of replica.inFlight) {
        if (left - 1 <= 0) {
          this.counts.served++;
          replica.thisTick.served++;
        } else rest.push(left - 1);
      }
      replica.inFlight = rest;
    }
  }

  private record(replica: string | undefined, event: RaceEvent): void {
    this.entries.push(replica === undefined ? { at: this.now, event } : { at: this.now, replica, event });
  }
}
