import { describeError } from "@outbox/client/internal";
import type { FaultClient, FaultConfig } from "@outbox/devstack";
import { createDatabase } from "@outbox/shared";
import { freezeBackends } from "@outbox/test-kit/process";
import { formatSeconds } from "../checks.js";
import type { FaultedDaemon, FaultRig } from "./fault-rig.js";
import { defaultAttemptSpanMs, TIME_SCALE } from "./faults-env.js";

/** A fault in place: how to lift it, or why it could not be put in place. */
export interface InjectedFault {
  /** Null when the fault is on; otherwise the reason it is not (the row fails with it). */
  readonly notInjected: string | null;
  readonly figures: Readonly<Record<string, unknown>>;
  lift(): Promise<void>;
}

export interface FaultSpec {
  /** The row's key in the report's figures. */
  readonly name: string;
  /** The check column: what was done. */
  readonly fault: string;
  /** Daemons the fault hits: their surviving replica must notice it, their probe gets the SIGTERM. */
  readonly hits: readonly FaultedDaemon[];
  /** How long the fault stays on. */
  readonly holdMs: number;
  /**
   * `fault start`: a hung connection may never come back, so the daemon must recover with the
   * fault still on. `fault end`: a dependency that is down, recovery follows its return.
   */
  readonly recoverFrom: "fault start" | "fault end";
  inject(rig: FaultRig, faults: FaultClient): Promise<InjectedFault>;
}

/** Long enough for a daemon that bounds its waits (at the drill's 1 s statement bound) to replace the connection. */
const FREEZE_MS = 8_000;
/** Every backend busy at the fault's start is frozen once idle within this (a message's transaction is ms). */
const BUSY_BACKENDS_FROZEN_WITHIN_MS = 1_000;
const POSTGRES_DOWN_MS = 5_000;
/** The "10 minutes of outage", which is beyond what RELAY_MAX_ATTEMPTS spans at default timing. */
const SNS_DOWN_SIMULATED_MS = 600_000;
const SNS_EMPTY_BODY_MS = 3_000;

/** The application names each daemon's connections carry in pg_stat_activity. */
// The look-up in pg_stat_activity runs on a healthy backend of its own: it answers at once.
const OBSERVER_STATEMENT_TIMEOUT_MS = 5_000;

const APPLICATION_NAMES: Record<FaultedDaemon, readonly string[]> = {
  relay: ["relay", "relay-listen"],
  consumer: ["consumer"],
  api: ["api"],
};

function frozenBackend(daemon: FaultedDaemon): FaultSpec {
  return {
    name: `${daemon}-backend-frozen`,
    fault: `${daemon}'s idle Postgres backends frozen (SIGSTOP) ${formatSeconds(FREEZE_MS)}`,
    hits: [daemon],
    holdMs: FREEZE_MS,
    recoverFrom: "fault start",
    async inject(rig) {
      const observer = createDatabase({
        url: rig.environment.databaseUrl,
        service: "drill-freeze",
        poolMax: 1,
        statementTimeoutMs: OBSERVER_STATEMENT_TIMEOUT_MS,
        idleInTransactionTimeoutMs: OBSERVER_STATEMENT_TIMEOUT_MS,
      });
      // Idle ones only: a backend stopped inside a transaction holds its locks (the NOTIFY queue's
      // at commit) until it runs again, and every other session waits on them however the daemon
      // behaves. A failed-over or cut-off server releases them; a frozen process never does.
      // Busy ones too, as each turns idle: the pool hands out the connection released last, so a
      // daemon at low concurrency could keep reusing the ones busy at the freeze and never feel it.
      const frozen = await freezeBackends(observer.db, {
        applicationNames: APPLICATION_NAMES[daemon],
        idleOnly: true,
        busyOnesWithinMs: BUSY_BACKENDS_FROZEN_WITHIN_MS,
      }).finally(() => observer.close(OBSERVER_STATEMENT_TIMEOUT_MS));
      return {
        notInjected: frozen.pids.length === 0 ? `no ${daemon} backend in pg_stat_activity` : null,
        figures: { frozenBackends: frozen.pids.length },
        lift: async () => frozen.thaw(),
      };
    },
  };
}

const postgresStopped: FaultSpec = {
  name: "postgres-stopped",
  fault: `Postgres stopped (fast shutdown) ${formatSeconds(POSTGRES_DOWN_MS)}, then started`,
  hits: ["relay", "consumer"],
  holdMs: POSTGRES_DOWN_MS,
  recoverFrom: "fault end",
  async inject(rig) {
    await rig.postgres.stopServer({ mode: "fast" });
    return { notInjected: null, figures: {}, lift: () => rig.postgres.startServer() };
  },
};

/** Sets an emulator rule on the rig's topic and checks that the emulator holds it as sent. */
async function busFault(rig: FaultRig, faults: FaultClient, rule: FaultConfig): Promise<InjectedFault> {
  const { topicArn } = rig.environment.resources;
  const lift = () => faults.clear({ topics: [topicArn] });
  try {
    const rules = await faults.set({ ...rule, topics: [topicArn] });
    const held = rules.topics[topicArn] ?? {};
    // An emulator that does not know a setting may keep the rule without it: the fault would be off.
    const missing = (Object.keys(rule) as (keyof FaultConfig)[]).filter(
      (key) => JSON.stringify(held[key]) !== JSON.stringify(rule[key]),
    );
    const notInjected = missing.length > 0 ? `the SNS emulator dropped ${missing.join(", ")}` : null;
    return { notInjected, figures: { rule }, lift };
  } catch (error) {
    return { notInjected: describeError(error), figures: { rule }, lift };
  }
}

const snsDownMs = SNS_DOWN_SIMULATED_MS / TIME_SCALE;

const snsDown: FaultSpec = {
  name: "sns-down",
  fault: `SNS down ${formatSeconds(snsDownMs)} = ${SNS_DOWN_SIMULATED_MS / 60_000} min simulated (relay timing 1:${TIME_SCALE}; RELAY_MAX_ATTEMPTS spans at most ${(defaultAttemptSpanMs() / 60_000).toFixed(1)} min at default timing)`,
  hits: ["relay"],
  holdMs: snsDownMs,
  recoverFrom: "fault end",
  inject: (rig, faults) => busFault(rig, faults, { failureRate: 1, failureMode: "internal-error" }),
};

const snsEmptyBody: FaultSpec = {
  name: "sns-empty-200",
  fault: `SNS answers PublishBatch 200 with an empty body ${formatSeconds(SNS_EMPTY_BODY_MS)}`,
  hits: ["relay"],
  holdMs: SNS_EMPTY_BODY_MS,
  recoverFrom: "fault end",
  inject: (rig, faults) => busFault(rig, faults, { actions: ["PublishBatch"], okBody: "empty" }),
};

/** The drill's rows, in the order they run. */
export const FAULTS: readonly FaultSpec[] = [
  frozenBackend("relay"),
  frozenBackend("consumer"),
  frozenBackend("api"),
  postgresStopped,
  snsDown,
  snsEmptyBody,
];
