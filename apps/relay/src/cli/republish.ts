import { performance } from "node:perf_hooks";
import type { SNSClient } from "@aws-sdk/client-sns";
import { type OutboxTables as Database, Deadline, uuidv7 } from "@outbox/client";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import {
  createLogger,
  createS3Client,
  createSnsClient,
  type DatabaseHandle,
  EXIT_CONFIG,
  EXIT_CRASH,
  EXIT_OK,
  EXIT_USAGE,
  endpointFor,
  type Logger,
  listenForStopRequests,
  packageVersion,
  reportConfigErrors,
  resolveConfig,
  type S3Client,
} from "@outbox/shared";
import type { Kysely } from "kysely";
import { publishTimeoutMs, type RepublishConfig, republishSettings } from "../settings.js";
import type { TopicResolver } from "../sns/entries.js";
import { planChunks, type ReadyRow } from "../sns/entries.js";
import type { Publisher } from "../sns/publisher.js";
import { createSnsPublisher } from "../sns/publisher.js";
import { TopicLimits } from "../sns/topic-limits.js";
import { topicRoutingProblems } from "../topic-routing.js";
import { connectDatabase } from "./open-database.js";
import { buildReplayEntry } from "./replay-entry.js";
import { goneObjectProblem } from "./replay-object.js";
import type { ReapplyGuard, RepublishRequest } from "./republish-options.js";
import { Pace } from "./republish-pace.js";
import {
  advanceRun,
  createRun,
  finishRun,
  type LockHeld,
  lockRun,
  oldestBeyond,
  type RepublishRun,
  readRange,
  resumeRun,
  unlockRun,
} from "./republish-runs.js";

/** How often a long run says how far it got (a log line on stderr, the counts as fields). */
const PROGRESS_EVERY_MS = 5_000;

export interface RepublishDeps {
  readonly db: Kysely<Database>;
  readonly publisher: Publisher;
  readonly resolveTopic: TopicResolver;
  /** The longest one PublishBatch may take, every SDK attempt included. */
  readonly publishTimeoutMs: number;
  /** RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS: older claim-checked rows are skipped, not re-sent. */
  readonly claimCheckSendWithinHours: number;
  /** Where a claim-checked row's object is looked for before its pointer goes again (goneObjectProblem). */
  readonly s3: S3Client;
  readonly log: Logger;
  /** Aborts at SIGTERM or Ctrl-C: the run ends after the page in hand, its cursor saved. */
  readonly stopping: AbortSignal;
}

/** How a run ended: its totals (the stored ones, so a resumed run counts its earlier part too). */
export interface RepublishOutcome {
  readonly run: string;
  readonly sent: number;
  readonly skipped: number;
  /** Entries the bus did not take in the batch the run stopped at; 0 when it finished. */
  readonly failed: number;
  readonly finished: boolean;
}

/**
 * Sends the run's range from its cursor to its end, a page of min(10, rate) rows at a time: each
 * page's messages (marked `replay=true`), then its cursor and counts in one UPDATE. A page the bus
 * did not take whole stops the run with its cursor before that page, so a resume sends it again
 * (the inbox makes the repeats duplicates) and no row is left out; a kill does the same. A row that
 * can never be sent (its topic no longer routed, no room for the mark, its claim-checked object gone)
 * is skipped and logged; S3 unable to say whether an object is there stops the run like a failed page.
 */
export async function republishRange(deps: RepublishDeps, run: RepublishRun): Promise<RepublishOutcome> {
  const { db, log } = deps;
  const pageSize = Math.min(MAX_BATCH_ENTRIES, run.rate);
  const pace = new Pace(run.rate);
  let { cursor, sent, skipped } = run;
  let reportedAt = performance.now();
  // For the per-page debug line, with the pace's own elapsed time: what this process sent since its first send.
  let sentThisRun = 0;
  // Each topic's MaximumMessageSize, read once, when its first row comes up: what the live relay
  // plans its requests with, so a replay fits wherever the original did.
  const limits = new TopicLimits(deps.publisher.messageLimit?.bind(deps.publisher), {
    timeoutMs: deps.publishTimeoutMs,
    log,
  });
  const limitsRead = new Set<string>();
  while (!deps.stopping.aborted) {
    const page = await readRange(db, run, cursor, pageSize);
    const last = page.at(-1);
    if (last === undefined) break;
    for (const { row } of page) {
      const topicArn = deps.resolveTopic(row.topic);
      if (topicArn === undefined || limitsRead.has(topicArn)) continue;
      limitsRead.add(topicArn);
      const within = Deadline.after(deps.publishTimeoutMs);
      await limits.refresh(topicArn, within).finally(() => within.dispose());
    }
    const ready: ReadyRow[] = [];
    let pageSkipped = 0;
    for (const { row } of page) {
      const built = buildReplayEntry(
        row,
        deps.resolveTopic,
        (arn) => limits.bytesFor(arn),
        run.id,
        deps.claimCheckSendWithinHours,
      );
      // Why it cannot go: what buildReplayEntry found, else its object gone (asked only of a sendable row).
      let reason: string | undefined;
      if (built.kind !== "ready") reason = built.reason;
      else {
        try {
          reason = await goneObjectProblem(deps.s3, row, deps.publishTimeoutMs);
        } catch (error) {
          log.error(
            { run: run.id, eventId: row.id, err: error },
            "republish: S3 did not say whether the event's object is there; stopped before this page, resume to send it again",
          );
          return { run: run.id, sent, skipped, failed: 0, finished: false };
        }
        if (reason === undefined) {
          ready.push({
            row,
            topicArn: built.topicArn,
            entry: built.entry,
            bytes: built.bytes,
            limitBytes: built.limitBytes,
          });
          continue;
        }
      }
      pageSkipped += 1;
      log.warn({ run: run.id, eventId: row.id, reason }, "republish: event skipped, it cannot be sent");
    }
    await pace.take(ready.length);
    // Unrounded: rounded down, a page sent on the dot would look early against the rate.
    const elapsedMs = pace.elapsedMs();
    for (const chunk of planChunks(ready)) {
      const deadline = Deadline.after(deps.publishTimeoutMs);
      try {
        const answer = await deps.publisher.publishBatch(chunk, deadline);
        const failed = chunk.entries.length - answer.published.length;
        if (failed > 0) {
          log.error(
            { run: run.id, failed, refused: answer.failed.slice(0, 3) },
            "republish: the bus did not take a whole batch; stopped before it, resume to send it again",
          );
          return { run: run.id, sent, skipped, failed, finished: false };
        }
      } catch (error) {
        log.error(
          { run: run.id, err: error },
          "republish: PublishBatch failed; stopped before this batch, resume to send it again",
        );
        return { run: run.id, sent, skipped, failed: chunk.entries.length, finished: false };
      } finally {
        deadline.dispose();
      }
    }
    await advanceRun(db, run.id, last.cursor, { sent: ready.length, skipped: pageSkipped });
    cursor = last.cursor;
    sent += ready.length;
    sentThisRun += ready.length;
    skipped += pageSkipped;
    log.debug({ run: run.id, batch: ready.length, sentThisRun, elapsedMs }, "republish page");
    if (performance.now() - reportedAt >= PROGRESS_EVERY_MS) {
      reportedAt = performance.now();
      log.info({ run: run.id, sent, skipped, cursor }, "republish progress");
    }
  }
  if (deps.stopping.aborted) {
    log.warn(
      { run: run.id, sent, skipped },
      `republish stopped; resume with: relay republish --resume ${run.id}`,
    );
    return { run: run.id, sent, skipped, failed: 0, finished: false };
  }
  await finishRun(db, run.id);
  return { run: run.id, sent, skipped, failed: 0, finished: true };
}

/**
 * Why a run may not go, when what is left of the range holds rows published longer ago than the
 * consumers' inbox retention (their replays would apply again); undefined when it may go. Checked
 * when a run starts and at each resume, against the rows not yet sent.
 */
async function reapplyRefusal(
  db: Kysely<Database>,
  guard: ReapplyGuard,
  range: Parameters<typeof oldestBeyond>[1],
  cursor: RepublishRun["cursor"],
): Promise<string | undefined> {
  if (guard === "allow-reapply") return undefined;
  const oldest = await oldestBeyond(db, range, cursor, guard.inboxRetentionHours);
  if (oldest === undefined) return undefined;
  return `the range holds rows published at ${oldest}, more than --inbox-retention-hours (${guard.inboxRetentionHours}) ago: a consumer may have deleted their inbox rows and would apply their effects again. Narrow the range, or pass --allow-reapply to send them anyway.`;
}

/** A run not worked: why, for the operator, and the command's exit code. */
export interface RepublishRefusal {
  readonly refused: string;
  readonly code: number;
}

/** What working a run needs besides its connection: RepublishDeps, and where a warning goes. */
export interface WorkRunDeps extends Omit<RepublishDeps, "db"> {
  /** The --allow-reapply warning, for the operator (stderr for the command). */
  warn(text: string): void;
  /** `db` is one session (default), or a transaction pooler's client connection: see lockRun. */
  readonly lockHeld?: LockHeld;
}

/** The settings a run's dependencies are made of: `relay republish`'s, or the console's. */
export type RunSettings = Pick<
  RepublishConfig,
  "topicArns" | "defaultTopicArn" | "claimCheckSendWithinHours" | "awsRequestTimeoutMs" | "awsMaxAttempts"
>;

/**
 * What working a run needs, made the same way for `relay republish` and the console: the topic
 * routing and publish bound of the settings, and where the run's lock lives, from how `database`
 * reaches Postgres (behind a transaction pooler, per transaction: see lockRun).
 */
export function runDeps(
  config: RunSettings,
  database: DatabaseHandle,
  clients: { readonly sns: SNSClient; readonly s3: S3Client },
  rest: Pick<WorkRunDeps, "log" | "stopping" | "warn">,
): WorkRunDeps {
  return {
    publisher: createSnsPublisher(clients.sns),
    resolveTopic: (topic) => config.topicArns[topic] ?? (config.defaultTopicArn || undefined),
    publishTimeoutMs: publishTimeoutMs(config),
    claimCheckSendWithinHours: config.claimCheckSendWithinHours,
    s3: clients.s3,
    ...rest,
    lockHeld: database.transactionPooler ? "per-transaction" : "session",
  };
}

/**
 * A new run over a range, or the resume of one, worked to its end (or its stop) on `db`: one
 * connection, whose session holds the run's lock (lockRun), so a second process working the same
 * run is refused. The safety rules of a replay are checked first: the inbox retention (or
 * allow-reapply), one process per run. `started` is told the run once it is recorded and locked,
 * before the first page. The lock is let go however the run ends (refused, done, stopped, failed):
 * a pooled connection outlives the run, and would keep it locked for its whole lifetime. The one
 * home of a republish: `relay republish` and the operator console call it.
 */
export async function workRepublish(
  db: Kysely<Database>,
  deps: WorkRunDeps,
  request: RepublishRequest,
  started: (run: RepublishRun) => void = () => {},
): Promise<RepublishOutcome | RepublishRefusal> {
  const guard = request.reapply;
  if (request.kind === "new") {
    const range = { ...request, topic: request.topic ?? null, orderingKey: request.orderingKey ?? null };
    const refused = await reapplyRefusal(db, guard, range, null);
    if (refused !== undefined) return { refused, code: EXIT_USAGE };
  }
  const id = request.kind === "new" ? uuidv7() : request.id;
  // A new run is nobody else's yet; locked all the same, so a --resume of it started meanwhile is refused.
  if (!(await lockRun(db, id, deps.lockHeld))) {
    return {
      refused: `run ${id} is being worked by another process; nothing sent (try again once it has stopped)`,
      code: EXIT_CRASH,
    };
  }
  try {
    const run =
      request.kind === "new"
        ? await createRun(db, { ...request, id })
        : await resumeRun(db, request.id, request.rate);
    if (run === undefined) return { refused: `no run ${id}`, code: EXIT_CRASH };
    if (request.kind === "resume" && !run.finished) {
      const refused = await reapplyRefusal(db, guard, run, run.cursor);
      if (refused !== undefined) return { refused, code: EXIT_USAGE };
    }
    if (guard === "allow-reapply") {
      deps.warn(
        "--allow-reapply: consumers whose inbox no longer holds these events will apply their effects again",
      );
    }
    deps.log.info(
      { run: run.id, from: run.from, to: run.to, topic: run.topic, key: run.orderingKey, rate: run.rate },
      `republish ${run.cursor === null ? "started" : "resumed"}; after a kill: relay republish --resume ${run.id}`,
    );
    started(run);
    return run.finished
      ? { run: run.id, sent: run.sent, skipped: run.skipped, failed: 0, finished: true }
      : await republishRange({ ...deps, db }, run);
  } finally {
    // A per-transaction lock is let go by its transaction; a session's unlock here could reach a
    // pooled server connection whose lock is another client's.
    if (deps.lockHeld !== "per-transaction") await unlockRun(db, id);
  }
}

/** The daemon's topic routing, refused like the daemon's when it can route nothing (exit 78). */
function resolveRepublishConfig(): RepublishConfig | undefined {
  return reportConfigErrors("relay republish", () =>
    resolveConfig(republishSettings, (config) => topicRoutingProblems(config), process.env),
  );
}

/**
 * The run's database: one session, whose lock holds for the whole run. Behind a transaction pooler,
 * DATABASE_SESSION_URL's (the run then works there); unset, the pooler's, with the run's lock held
 * only per transaction (lockRun), said in one line.
 */
async function republishDatabase(config: RepublishConfig, log: Logger): Promise<DatabaseHandle | null> {
  const database = await connectDatabase("republish", config, log);
  if (!database?.transactionPooler) return database;
  if (config.databaseSessionUrl === "") {
    log.info(
      "republish run locked per transaction behind a transaction pooler (a session lock needs a session; set DATABASE_SESSION_URL)",
    );
    return database;
  }
  await database.close(config.dbStatementTimeoutMs);
  return connectDatabase("republish", { ...config, databaseUrl: config.databaseSessionUrl }, log);
}

/**
 * `relay republish`: a new run over a range, or `--resume RUN`. Prints the run's totals as one JSON
 * line, `{"run":…,"sent":N,"skipped":N,"failed":N,"finished":B}`; exit 1 when it stopped early (a
 * refused batch, a failed PublishBatch, SIGTERM or Ctrl-C: resume it) or `--resume` names no run.
 */
export async function runRepublish(request: RepublishRequest): Promise<number> {
  const config = resolveRepublishConfig();
  if (config === undefined) return EXIT_CONFIG;
  const log = createLogger({
    service: "relay-republish",
    version: packageVersion(import.meta.url),
    level: config.logLevel,
    destination: process.stderr,
  });
  const database = await republishDatabase(config, log);
  if (!database) return EXIT_CONFIG;
  const sns = createSnsClient({
    region: config.awsRegion,
    endpoint: endpointFor(config.awsEndpointUrlSns, config.awsEndpointUrl),
    connectionTimeoutMs: config.awsConnectionTimeoutMs,
    requestTimeoutMs: config.awsRequestTimeoutMs,
    maxAttempts: config.awsMaxAttempts,
  });
  // Only claim-checked rows use it (goneObjectProblem): no request is made for any other.
  const s3 = createS3Client({
    region: config.awsRegion,
    endpoint: endpointFor(config.awsEndpointUrlS3, config.awsEndpointUrl),
    connectionTimeoutMs: config.awsConnectionTimeoutMs,
    requestTimeoutMs: config.awsRequestTimeoutMs,
    maxAttempts: config.awsMaxAttempts,
  });
  const stops = listenForStopRequests(log, () => {});
  try {
    // One connection for the whole run: the run's lock is this connection's (lockRun).
    const outcome = await database.db.connection().execute((db) =>
      workRepublish(
        db,
        runDeps(
          config,
          database,
          { sns, s3 },
          {
            log,
            stopping: stops.stopping,
            warn: (text) => process.stderr.write(`relay republish: ${text}\n`),
          },
        ),
        request,
      ),
    );
    if ("refused" in outcome) {
      process.stderr.write(`relay republish: ${outcome.refused}\n`);
      return outcome.code;
    }
    log.info(outcome, "republish done");
    process.stdout.write(`${JSON.stringify(outcome)}\n`);
    return outcome.finished ? EXIT_OK : EXIT_CRASH;
  } finally {
    stops.dispose();
    sns.destroy();
    s3.destroy();
    await database.close(config.dbStatementTimeoutMs);
  }
}
