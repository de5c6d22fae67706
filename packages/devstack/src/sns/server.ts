import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EVENT_ID_ATTRIBUTE } from "@outbox/client";
import { describeError } from "@outbox/client/internal";
import { handleStatsControl, STATS_PATH } from "../stats/control.js";
import { DEFAULT_MAX_TRACKED_EVENT_IDS, PublishStats } from "../stats/stats.js";
import type { Action } from "./actions/context.js";
import { createTopic } from "./actions/create-topic.js";
import { deleteTopic } from "./actions/delete-topic.js";
import { getSubscriptionAttributes } from "./actions/get-subscription-attributes.js";
import { getTopicAttributes } from "./actions/get-topic-attributes.js";
import { listSubscriptionsByTopic } from "./actions/list-subscriptions-by-topic.js";
import { listTopics } from "./actions/list-topics.js";
import { publish } from "./actions/publish.js";
import { publishBatch } from "./actions/publish-batch.js";
import { setSubscriptionAttributes } from "./actions/set-subscription-attributes.js";
import { setTopicAttributes } from "./actions/set-topic-attributes.js";
import { subscribe } from "./actions/subscribe.js";
import { unsubscribe } from "./actions/unsubscribe.js";
import { SnsError } from "./errors.js";
import { type DeliveryErrorHandler, FanOut } from "./fan-out.js";
import { FAULT_CONTROL_PATH, handleFaultControl } from "./faults/control.js";
import { FaultInjector } from "./faults/injector.js";
import { okBodyResponse } from "./faults/ok-body.js";
import { parseQuery } from "./query.js";
import { Registry } from "./registry.js";
import { SqsJsonClient } from "./sqs-json.js";
import { errorXml, successXml } from "./xml.js";

const ACTIONS: Readonly<Record<string, Action>> = {
  CreateTopic: createTopic,
  DeleteTopic: deleteTopic,
  ListTopics: listTopics,
  GetTopicAttributes: getTopicAttributes,
  SetTopicAttributes: setTopicAttributes,
  Subscribe: subscribe,
  Unsubscribe: unsubscribe,
  ListSubscriptionsByTopic: listSubscriptionsByTopic,
  GetSubscriptionAttributes: getSubscriptionAttributes,
  SetSubscriptionAttributes: setSubscriptionAttributes,
  Publish: publish,
  PublishBatch: publishBatch,
};

export interface SnsEmulatorOptions {
  /**
   * Where fan-out delivers: a *local* SQS server's endpoint (local-aws-sqs, LocalStack), spoken
   * to through its public JSON API, unsigned.
   */
  sqsEndpoint: string;
  region: string;
  accountId: string;
  /** Kept for compatibility; local SQS servers do not check signatures, so fan-out does not sign. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Message attribute counted as the event id in the publish statistics. Default `event_id`. */
  statsEventIdAttribute?: string;
  /** Distinct event ids remembered per topic for the statistics. Default 2 000 000. */
  statsMaxTrackedEventIds?: number;
  /** 0 (default) picks a free port. */
  port?: number;
  /** AWS drops undeliverable messages silently; by default we at least say so on stderr. */
  onDeliveryError?: DeliveryErrorHandler;
}

export interface SnsEmulator {
  readonly endpoint: string;
  readonly port: number;
  readonly faultControlUrl: string;
  readonly faults: FaultInjector;
  /** `GET` publish statistics, `DELETE` resets them; see {@link StatsClient}. */
  readonly statsUrl: string;
  readonly stats: PublishStats;
  stop(): Promise<void>;
}

export const KEEP_ALIVE_MS = 5_000;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendXml(
  res: ServerResponse,
  status: number,
  requestId: string,
  xml: string,
  contentType = "text/xml",
): void {
  // An explicit length spares chunked encoding (and a second write per response).
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(xml),
    "x-amzn-requestid": requestId,
  });
  res.end(xml);
}

/** An SNS endpoint speaking the AWS Query protocol the real SDK uses, delivering into SQS. */
export async function startSnsEmulator(options: SnsEmulatorOptions): Promise<SnsEmulator> {
  const registry = new Registry(options.region, options.accountId);
  const faults = new FaultInjector();
  const stats = new PublishStats(
    options.statsEventIdAttribute ?? EVENT_ID_ATTRIBUTE,
    options.statsMaxTrackedEventIds ?? DEFAULT_MAX_TRACKED_EVENT_IDS,
  );
  const sqs = new SqsJsonClient(options.sqsEndpoint);
  let endpoint = "";
  const fanOut = new FanOut(
    sqs,
    options.region,
    () => endpoint,
    options.onDeliveryError ??
      ((error, subscription) =>
        console.error(`[sns] delivery to ${subscription.endpoint} failed: ${error.message}`)),
    stats,
  );

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const body = await readBody(req);
    if (url.pathname === FAULT_CONTROL_PATH) return handleFaultControl(req, res, body, faults);
    if (url.pathname === STATS_PATH) return handleStatsControl(req, res, stats);

    // GET with a query string is how the envelope's UnsubscribeURL is followed.
    const params = req.method === "GET" ? new Map(url.searchParams) : parseQuery(body);
    const requestId = randomUUID();
    const actionName = params.get("Action") ?? "";
    const target = { action: actionName, topicArn: params.get("TopicArn") ?? params.get("TargetArn") };
    await faults.delay(target);
    const fault = faults.requestFault(target);
    if (fault.kind === "hang") return faults.hold(req.socket, fault.scope);
    if (fault.kind === "fail")
      return sendXml(res, fault.error.status, requestId, errorXml(fault.error, requestId));
    if (fault.kind === "okBody") {
      const { contentType, text } = okBodyResponse(fault.body, actionName, params, requestId);
      return sendXml(res, 200, requestId, text, contentType);
    }

    const action = ACTIONS[actionName];
    try {
      if (!action)
        throw new SnsError("InvalidAction", `The action ${actionName} is not valid for this web service.`);
      const result = await action({ params, registry, fanOut, faults, stats });
      sendXml(res, 200, requestId, successXml(actionName, result, requestId));
    } catch (error) {
      const snsError =
        error instanceof SnsError ? error : new SnsError("InternalError", describeError(error), 500);
      sendXml(res, snsError.status, requestId, errorXml(snsError, requestId));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  // Node's agents subtract a 1 s safety margin from the server's `Keep-Alive: timeout=N` hint,
  // so with 1 s every client socket was treated as expired and each call opened a new TCP
  // connection. stop() closes idle connections itself, so a longer keep-alive costs nothing.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  endpoint = `http://127.0.0.1:${port}`;

  return {
    endpoint,
    port,
    faultControlUrl: `${endpoint}${FAULT_CONTROL_PATH}`,
    faults,
    statsUrl: `${endpoint}${STATS_PATH}`,
    stats,
    async stop() {
      faults.dropHung();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      sqs.destroy();
    },
  };
}
