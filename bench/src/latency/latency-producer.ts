/** The latency runs' producer: one event per transaction, each commit's wall time kept by event id. */
import { randomUUID } from "node:crypto";
import { enqueue } from "@outbox/client";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import pg from "pg";
import { getDisabledLogger, initializeMessageStorage } from "pg-transactional-outbox";
import { BODY, benchEvent, KEYS, TRACEPARENT } from "../fixtures.js";
import type { RelayImpl } from "../jobs.js";
import { wallMs } from "../measure.js";
import { PTO_TABLE } from "../pto-fixtures.js";

/** As many connections as produceAtRate keeps commits in flight. */
const PRODUCER_CONNECTIONS = 8;

export interface LatencyProducer {
  /** Commits event `n` in its own transaction, the way the subject's users write it. */
  produce(n: number): Promise<void>;
  /** Event id → wall-clock ms of its commit. */
  readonly committedAt: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

/**
 * A producer into the subject's outbox: ours through `enqueue`, the peer's through its own store.
 * The peer's pool is opened and warmed in our runs too: the recorded figures were measured so.
 */
export async function startLatencyProducer(url: string, impl: RelayImpl): Promise<LatencyProducer> {
  const peerPool = new pg.Pool({ connectionString: url, max: PRODUCER_CONNECTIONS });
  // An idle connection ended by the server (the run's DROP DATABASE … WITH (FORCE) racing this
  // pool's end) is an 'error' event on the pool: without a listener it would end the whole bench.
  peerPool.on("error", () => {});
  const ours =
    impl === "ours"
      ? createDatabase({
          url,
          service: "bench-producer",
          poolMax: PRODUCER_CONNECTIONS,
          statementTimeoutMs: 30_000,
          idleInTransactionTimeoutMs: 30_000,
        })
      : undefined;
  const close = async () => {
    await peerPool.end();
    await ours?.close(2_000);
  };
  try {
    const committedAt = new Map<string, number>();
    const peerStore = initializeMessageStorage(
      {
        outboxOrInbox: "outbox",
        settings: {
          dbSchema: "public",
          dbTable: PTO_TABLE,
          enableMaxAttemptsProtection: false,
          enablePoisonousMessageProtection: false,
        },
      },
      getDisabledLogger(),
    );
    const warm = (query: (text: string) => Promise<unknown>) =>
      Promise.all(Array.from({ length: PRODUCER_CONNECTIONS }, () => query("SELECT 1")));
    await warm((text) => peerPool.query(text));
    if (ours) await warm((text) => ours.pool.query(text));

    const produce = ours
      ? produceWithEnqueue(ours, committedAt)
      : produceWithPeerStore(peerPool, peerStore, committedAt);
    return { produce, committedAt, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function produceWithEnqueue(ours: DatabaseHandle, committedAt: Map<string, number>) {
  return async (n: number): Promise<void> => {
    const [id] = await enqueue(ours.db, [benchEvent(n)]);
    committedAt.set(id ?? "", wallMs());
  };
}

function produceWithPeerStore(
  pool: pg.Pool,
  store: ReturnType<typeof initializeMessageStorage>,
  committedAt: Map<string, number>,
) {
  return async (n: number): Promise<void> => {
    const id = randomUUID();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await store(
        {
          id,
          aggregateType: "bench",
          aggregateId: `key-${n % KEYS}`,
          messageType: "bench.happened",
          segment: `key-${n % KEYS}`,
          concurrency: "parallel",
          payload: { n, body: BODY },
          metadata: { traceparent: TRACEPARENT },
        },
        client,
      );
      await client.query("COMMIT");
      committedAt.set(id, wallMs());
    } finally {
      client.release();
    }
  };
}
