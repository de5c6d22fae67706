import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { OutboxTables as Database } from "@outbox/client";
import { describeError } from "@outbox/client/internal";
import { type RepublishRequest, readBlockedKeys, rowsLeft } from "@outbox/relay/operations";
import { isUuid, type Logger } from "@outbox/shared";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { filterOf, parseActionRequest } from "./actions/action-request.js";
import { type ActionDeps, previewAction, runAction } from "./actions/perform.js";
import type { ReplayDesk } from "./actions/replay-desk.js";
import { parseReplayRequest } from "./actions/replay-request.js";
import type { Asset } from "./assets/load-assets.js";
import {
  asksCredentials,
  authenticate,
  type Credentials,
  CSRF_COOKIE,
  csrfCookie,
  fromAnotherSite,
  loopbackHost,
  newCsrfToken,
  SECURITY_HEADERS,
  sameOriginPost,
} from "./guard.js";
import { type Html, html, shown } from "./html.js";
import { readBacklog } from "./reads/backlog.js";
import type { DeadLetterDesk } from "./reads/dead-letters.js";
import { matchesLetter } from "./reads/dead-letters.js";
import { deadRowGroups, listDeadRows } from "./reads/dead-rows.js";
import { readMinuteSeries } from "./reads/flow.js";
import { type QueueDepth, queueDepth } from "./reads/queue-depths.js";
import { ReplayRuns } from "./reads/replays.js";
import { SharedReads } from "./reads/shared-reads.js";
import { previewView, reportView } from "./views/action.js";
import { BLOCKED_KEYS_LISTED, blockedKeysView } from "./views/blocked-keys.js";
import { deadLettersView, letterPage } from "./views/dead-letters.js";
import { deadRowsView } from "./views/dead-rows.js";
import { flowView } from "./views/flow.js";
import type { ActionContext, ActionName } from "./views/forms.js";
import { layout, type ViewPath } from "./views/layout.js";
import { replayPreviewView, replayReportView, replayStopView } from "./views/replay-forms.js";
import { replaysView } from "./views/replays.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The operator the credentials name (CONSOLE_USERS), else undefined; set by the auth hook before any route. */
    who: string | undefined;
    /** The console is read-only for this request: CONSOLE_READ_ONLY, or a read-only operator. */
    readOnly: boolean;
    /** The CSRF token this request's forms carry: its cookie's, or a fresh one set on the response. */
    csrf: string;
  }
}

export interface ConsoleServerDeps {
  readonly db: Kysely<Database>;
  readonly desk: DeadLetterDesk | null;
  /** Null when the console has no topic routing: it shows runs and starts none. */
  readonly replays: ReplayDesk | null;
  readonly log: Logger;
  readonly assets: ReadonlyMap<string, Asset>;
  /** CONSOLE_TOKEN and CONSOLE_USERS; neither on loopback. */
  readonly credentials: Credentials;
  readonly readOnly: boolean;
  readonly claimCheckSendWithinHours: number;
  /** Seconds between a page's live refreshes. */
  readonly refreshSeconds: number;
}

export interface ConsoleServer {
  /** Resolves with the port it listens on. */
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

/** A form's body: parsed as URL-encoded fields, at most this many bytes (10 000 ids fit); more is a 413. */
const FORM_LIMIT_BYTES = 1_048_576;

/**
 * The shortest time between two re-reads of the DLQ asked for (each receives every message of it):
 * more often is a 429. A page view walks only once its listing is older than LISTING_FRESH_MS.
 */
const REREAD_EVERY_MS = 10_000;

/** `who` for a log line: the operator's name when one is authenticated, no field otherwise. */
function whoField(who: string | undefined): { who?: string } {
  return who === undefined ? {} : { who };
}

/** Postgres's class 22, data exception: a value it refuses, which is the input's fault, not an outage. */
function dataException(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("22");
}

async function depthOrError(desk: DeadLetterDesk, url: string): Promise<QueueDepth | { error: string }> {
  try {
    return await queueDepth(desk.queues, url);
  } catch (error) {
    return { error: describeError(error) };
  }
}

/** The "asked" a confirmation carries back (for the log line only): plain fields, capped. */
function askedField(text: string | null): Record<string, string | number> {
  const asked: Record<string, string | number> = {};
  try {
    const parsed: unknown = JSON.parse(text ?? "{}");
    if (typeof parsed !== "object" || parsed === null) return asked;
    for (const [name, value] of Object.entries(parsed).slice(0, 10)) {
      if (typeof value === "number") asked[name.slice(0, 40)] = value;
      else if (typeof value === "string") asked[name.slice(0, 40)] = value.slice(0, 200);
    }
  } catch {
    // Not JSON: logged as asked nothing; the ids are what the action acts on.
  }
  return asked;
}

/**
 * The console's HTTP server: its views (server-rendered HTML), its assets, its two action steps
 * (preview, then run), behind the guard: credentials when a token is set, loopback names only
 * without one, the CSRF check on every POST, the security headers on every answer.
 */
export function createConsoleServer(deps: ConsoleServerDeps): ConsoleServer {
  const app = Fastify({ logger: false, bodyLimit: FORM_LIMIT_BYTES, requestTimeout: 120_000 });
  const actionDeps: ActionDeps = {
    db: deps.db,
    desk: deps.desk,
    claimCheckSendWithinHours: deps.claimCheckSendWithinHours,
    log: deps.log,
  };
  const replayRuns = new ReplayRuns(deps.db);
  // Every view's reads, shared by the tabs for one refresh period (the Replays view too: its counts
  // are ReplayRuns's); a POST's answer forgets them, so the next view shows what it changed.
  const shared = new SharedReads(deps.refreshSeconds * 1_000);
  app.addHook("onResponse", async (request) => {
    if (request.method === "POST") shared.forget();
  });
  app.decorateRequest("who", undefined);
  app.decorateRequest("readOnly", false);
  app.decorateRequest("csrf", "");
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: FORM_LIMIT_BYTES },
    (_request, body, done) => done(null, new URLSearchParams(String(body))),
  );

  app.addHook("onRequest", async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    if (!asksCredentials(deps.credentials) && !loopbackHost(request.headers.host)) {
      return reply.code(403).type("text/plain").send("this console answers on a loopback name only\n");
    }
    // Another site's link, image or script gets nothing, not even a page view (which may walk the DLQ).
    if (fromAnotherSite(request.headers["sec-fetch-site"] as string | undefined)) {
      return reply
        .code(403)
        .type("text/plain")
        .send("this console answers its own pages only: open it by its address, not from another site\n");
    }
    const identity = authenticate(request.headers.authorization, deps.credentials);
    if (identity === undefined) {
      return reply
        .code(401)
        .header("www-authenticate", 'Basic realm="outbox console", charset="UTF-8"')
        .type("text/plain")
        .send(
          "the console needs an operator's name and password (CONSOLE_USERS), or its token (CONSOLE_TOKEN) as the password\n",
        );
    }
    request.who = identity.who;
    request.readOnly = deps.readOnly || identity.readOnly;
    const cookie = csrfCookie(request.headers.cookie);
    request.csrf = cookie ?? newCsrfToken();
    if (cookie === undefined) {
      reply.header("set-cookie", `${CSRF_COOKIE}=${request.csrf}; Path=/; HttpOnly; SameSite=Strict`);
    }
  });

  const context = (request: FastifyRequest): ActionContext => ({
    csrf: request.csrf,
    readOnly: request.readOnly,
  });
  const page = (reply: FastifyReply, title: string, view: ViewPath | null, content: Html, refresh = true) =>
    reply.type("text/html; charset=utf-8").send(
      layout(
        {
          title,
          view,
          readOnly: reply.request.readOnly,
          refreshSeconds: refresh ? deps.refreshSeconds : 0,
        },
        content,
      ).markup,
    );
  const problem = (reply: FastifyReply, status: number, text: string) =>
    reply
      .code(status)
      .type("text/html; charset=utf-8")
      .send(
        layout(
          { title: "Not done", view: null, readOnly: reply.request.readOnly, refreshSeconds: 0 },
          html`<p role="alert" class="alert">${text}</p><p><a href="/">Back to the flow</a></p>`,
        ).markup,
      );

  app.get("/assets/:name", async (request, reply) => {
    const { name } = request.params as { name: string };
    const asset = deps.assets.get(name);
    if (asset === undefined) return reply.code(404).type("text/plain").send("no such asset\n");
    return reply.type(asset.type).send(asset.body);
  });

  app.get("/", async (_request, reply) => {
    const flow = await shared.read("/", async () => {
      const [status, series] = await Promise.all([readBacklog(deps.db), readMinuteSeries(deps.db)]);
      const queues =
        deps.desk === null
          ? null
          : await Promise.all([
              depthOrError(deps.desk, deps.desk.queues.queueUrl),
              depthOrError(deps.desk, deps.desk.queues.dlqUrl),
            ]).then(([queue, dlq]) => ("error" in queue ? queue : "error" in dlq ? dlq : { queue, dlq }));
      return { status, series, queues };
    });
    return page(reply, "Flow", "/", flowView(flow));
  });

  app.get("/blocked-keys", async (request, reply) => {
    const { keys, blocked } = await shared.read("/blocked-keys", () =>
      readBlockedKeys(deps.db, BLOCKED_KEYS_LISTED),
    );
    return page(reply, "Blocked keys", "/blocked-keys", blockedKeysView(keys, blocked, context(request)));
  });

  app.get("/dead-rows", async (request, reply) => {
    const filter = filterOf(new URLSearchParams(request.query as Record<string, string>));
    if (typeof filter === "string") return problem(reply, 400, filter);
    // The groups ignore the kind chosen: they are the choice.
    const [rows, groups] = await shared.read(`/dead-rows ${JSON.stringify(filter)}`, () =>
      Promise.all([listDeadRows(deps.db, filter), deadRowGroups(deps.db, { ...filter, kind: undefined })]),
    );
    return page(reply, "Dead rows", "/dead-rows", deadRowsView(rows, groups, filter, context(request)));
  });

  app.get("/dead-letters", async (request, reply) => {
    const desk = deps.desk;
    if (desk === null) {
      return page(
        reply,
        "Dead letters",
        "/dead-letters",
        html`<p>No DLQ configured (CONSUMER_QUEUE_URL, CONSUMER_DLQ_URL).</p>`,
      );
    }
    const query = new URLSearchParams(request.query as Record<string, string>);
    const filter = filterOf(query);
    if (typeof filter === "string") return problem(reply, 400, filter);
    const refreshing = request.headers["x-console-refresh"] === "1";
    // A GET never asks for a walk: the re-read is a POST (below).
    const [listing, dlq] = await Promise.all([
      refreshing ? desk.lastListing() : desk.listing(),
      shared.read("dlq depth", () => depthOrError(desk, desk.queues.dlqUrl)),
    ]);
    const byKind = new Map<string, number>();
    for (const letter of listing.letters) {
      if (matchesLetter({ ...filter, kind: undefined }, letter))
        byKind.set(letter.kind, (byKind.get(letter.kind) ?? 0) + 1);
    }
    const groups = [...byKind]
      .map(([kind, count]) => ({ kind, count }))
      .sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
    const matching = listing.letters.filter((letter) => matchesLetter(filter, letter));
    return page(
      reply,
      "Dead letters",
      "/dead-letters",
      deadLettersView({ listing, matching, groups, dlq, page: letterPage(query) }, filter, context(request)),
    );
  });

  app.get("/replays", async (request, reply) => {
    const runs = await shared.read("/replays", () => replayRuns.latest());
    return page(
      reply,
      "Replays",
      "/replays",
      replaysView(runs, context(request), deps.replays !== null, deps.replays?.running() ?? new Set()),
    );
  });

  // Every POST: the console's own form (CSRF), and not in read-only mode (a re-read of the DLQ
  // aside: it shows, it changes nothing an operator acts on).
  app.addHook("preHandler", async (request, reply) => {
    if (request.method !== "POST") return;
    if (request.readOnly && request.routeOptions.url !== "/dead-letters/read") {
      return problem(
        reply,
        403,
        "Read-only console: actions are off (CONSOLE_READ_ONLY, or a read-only operator).",
      );
    }
    const fields = request.body instanceof URLSearchParams ? request.body : undefined;
    if (
      fields === undefined ||
      !sameOriginPost(request.headers as Record<string, string>, fields.get("csrf"))
    ) {
      deps.log.warn(
        { ...whoField(request.who), route: request.routeOptions.url, origin: request.headers.origin ?? null },
        "console: refused a POST that did not come from its own page (CSRF check)",
      );
      return problem(
        reply,
        403,
        "Refused: this form did not come from this console's page (CSRF check). Reload the page and try again.",
      );
    }
  });

  // The DLQ read again now (every message received once, handed back at once), at most every
  // REREAD_EVERY_MS; then the listing, by its GET.
  let rereadAt = Number.NEGATIVE_INFINITY;
  app.post("/dead-letters/read", async (_request, reply) => {
    if (deps.desk === null)
      return problem(reply, 400, "no DLQ configured (CONSUMER_DLQ_URL): nothing to read");
    const since = performance.now() - rereadAt;
    if (since < REREAD_EVERY_MS) {
      const wait = Math.ceil((REREAD_EVERY_MS - since) / 1_000);
      return problem(
        reply.header("retry-after", String(wait)),
        429,
        `The DLQ was read again ${Math.floor(since / 1_000)} s ago: at most one re-read every ${REREAD_EVERY_MS / 1_000} s (each receives every message). Try again in ${wait} s.`,
      );
    }
    rereadAt = performance.now();
    await deps.desk.listing(true);
    return reply.code(303).header("location", "/dead-letters").send();
  });

  app.post("/actions/preview", async (request, reply) => {
    const parsed = parseActionRequest(request.body as URLSearchParams);
    if (typeof parsed === "string") return problem(reply, 400, parsed);
    const preview = await previewAction(actionDeps, parsed);
    if (typeof preview === "string") return problem(reply, 400, preview);
    const title = `${parsed.action[0]?.toUpperCase()}${parsed.action.slice(1)}: confirm`;
    return page(reply, title, null, previewView(preview, context(request)), false);
  });

  app.post("/actions/run", async (request, reply) => {
    const fields = request.body as URLSearchParams;
    const parsed = parseActionRequest(fields);
    if (typeof parsed === "string") return problem(reply, 400, parsed);
    if (parsed.targets.kind !== "ids")
      return problem(reply, 400, "a confirmation names its items: preview the action first");
    const { ids } = parsed.targets;
    const outcome = await runAction(
      actionDeps,
      parsed.action as ActionName,
      ids,
      askedField(fields.get("asked")),
      request.who,
      parsed.outOfOrder,
    );
    if (typeof outcome === "string") return problem(reply, 400, outcome);
    return page(reply, "Done", null, reportView(outcome, ids.length), false);
  });

  /** How many rows a republish would send: a new run's range, or what a run has left. */
  const replayRows = async (request: RepublishRequest): Promise<number | null> => {
    if (request.kind === "resume") {
      return (await replayRuns.one(request.id))?.left ?? null;
    }
    return rowsLeft(deps.db, {
      id: "",
      from: request.from,
      to: request.to ?? new Date().toISOString(),
      topic: request.topic ?? null,
      orderingKey: request.orderingKey ?? null,
      rate: request.rate,
      cursor: null,
      sent: 0,
      skipped: 0,
      finished: false,
    });
  };

  app.post("/replays/preview", async (request, reply) => {
    if (deps.replays === null)
      return problem(reply, 400, "no topic routing (RELAY_TOPIC_ARNS): this console starts no republish");
    const parsed = parseReplayRequest(request.body as URLSearchParams);
    if (typeof parsed === "string") return problem(reply, 400, parsed);
    const rows = await replayRows(parsed);
    if (rows === null) return problem(reply, 404, "No such run: nothing to resume.");
    const title = parsed.kind === "new" ? "Republish: confirm" : "Resume: confirm";
    // The request's key: the confirmation posted twice starts one run.
    return page(reply, title, null, replayPreviewView(parsed, rows, randomUUID(), context(request)), false);
  });

  app.post("/replays/run", async (request, reply) => {
    if (deps.replays === null)
      return problem(reply, 400, "no topic routing (RELAY_TOPIC_ARNS): this console starts no republish");
    const fields = request.body as URLSearchParams;
    const parsed = parseReplayRequest(fields);
    if (typeof parsed === "string") return problem(reply, 400, parsed);
    const key = fields.get("request") ?? "";
    if (!isUuid(key))
      return problem(reply, 400, "a confirmation carries its request's key: preview the republish first");
    const rows = await replayRows(parsed);
    if (rows === null) return problem(reply, 404, "No such run: nothing to resume.");
    const outcome = await deps.replays.start(parsed, key);
    const { reapply, ...asked } = parsed;
    deps.log.info(
      {
        action: parsed.kind === "new" ? "republish" : "resume",
        filter: {
          ...asked,
          reapply: reapply === "allow-reapply" ? reapply : `inbox retention ${reapply.inboxRetentionHours} h`,
        },
        count: rows,
        outcome:
          "busy" in outcome
            ? { refused: outcome.busy }
            : "refused" in outcome
              ? { refused: outcome.refused }
              : { run: outcome.run.id, started: !outcome.again },
        ...whoField(request.who),
      },
      "console action",
    );
    if ("busy" in outcome) return problem(reply, 429, outcome.busy);
    return page(
      reply,
      "refused" in outcome ? "Not started" : "Started",
      null,
      replayReportView(outcome),
      false,
    );
  });

  app.post("/replays/stop", async (request, reply) => {
    if (deps.replays === null)
      return problem(reply, 400, "no topic routing: this console works no republish run");
    const run = (request.body as URLSearchParams).get("run") ?? "";
    if (!isUuid(run)) return problem(reply, 400, "the run to stop is not a run id");
    const stopped = deps.replays.stop(run.toLowerCase());
    deps.log.info(
      { action: "stop-republish", filter: { run }, outcome: { stopped }, ...whoField(request.who) },
      "console action",
    );
    if (!stopped)
      return problem(
        reply,
        404,
        "This console works no such run now (it ended, or another process works it).",
      );
    return page(reply, "Stopping", null, replayStopView(run), false);
  });

  app.setNotFoundHandler((request, reply) => problem(reply, 404, `No page ${shown(request.url, 200)} here.`));
  app.setErrorHandler((error, request, reply) => {
    // The request's own fault (a body over the limit, a malformed one): its status, with the reason.
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === "number" && status >= 400 && status < 500) {
      return problem(reply, status, `Refused: ${shown(describeError(error), 300)}`);
    }
    if (dataException(error)) {
      deps.log.warn({ err: error, route: request.routeOptions.url }, "console: a value the database refused");
      return problem(
        reply,
        400,
        `The database refused a value of this request: ${shown(describeError(error), 300)}`,
      );
    }
    deps.log.error(
      { err: error, method: request.method, route: request.routeOptions.url },
      "console request failed",
    );
    return problem(
      reply,
      500,
      "The console could not answer (see its log). The database or SQS may be down.",
    );
  });

  return {
    async listen(host, port) {
      await app.listen({ host, port });
      return (app.server.address() as AddressInfo).port;
    },
    close: () => app.close(),
  };
}
