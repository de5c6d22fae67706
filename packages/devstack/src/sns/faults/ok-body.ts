import { randomUUID } from "node:crypto";
import { type QueryParams, queryList } from "../query.js";
import { successXml, type XmlObject } from "../xml.js";
import type { OkBody } from "./config.js";

/** A gateway's error page, as a proxy in front of the endpoint might serve it with a 200. */
const HTML_PAGE =
  "<!DOCTYPE html>\n<html><head><title>Service Unavailable</title></head>\n" +
  "<body><h1>Service Unavailable</h1><p>Please try again later.<br></p></body></html>\n";

/**
 * What the action would have answered had it run: for PublishBatch every entry `Successful`, so a
 * client that believes a cut-off document is told its entries went out, though none was executed.
 */
function wouldHaveAnswered(action: string, params: QueryParams): XmlObject | null {
  if (action !== "PublishBatch") return null;
  const member = queryList(params, "PublishBatchRequestEntries").map((entry) => ({
    Id: entry.get("Id") ?? "",
    MessageId: randomUUID(),
  }));
  return { Successful: { member }, Failed: "" };
}

/** The body (and its content type) the `okBody` fault answers a call with, in place of running it. */
export function okBodyResponse(
  body: OkBody,
  action: string,
  params: QueryParams,
  requestId: string,
): { contentType: string; text: string } {
  switch (body) {
    case "empty":
      return { contentType: "text/xml", text: "" };
    case "html":
      return { contentType: "text/html", text: HTML_PAGE };
    case "truncated": {
      const whole = successXml(action, wouldHaveAnswered(action, params), requestId);
      return { contentType: "text/xml", text: whole.slice(0, Math.floor(whole.length / 2)) };
    }
  }
}
