import { XMLBuilder } from "fast-xml-parser";
import type { SnsError } from "./errors.js";

const NAMESPACE = "http://sns.amazonaws.com/doc/2010-03-31/";

/** An XML element tree: strings are text, arrays repeat the element (AWS `member` lists). */
export type XmlNode = string | number | boolean | XmlObject | XmlNode[];
export interface XmlObject {
  [element: string]: XmlNode;
}

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  suppressEmptyNode: false,
});

export function successXml(action: string, result: XmlObject | null, requestId: string): string {
  const body: XmlObject = { "@_xmlns": NAMESPACE };
  // Actions without output (DeleteTopic, Unsubscribe, …) carry no <XxxResult> at all.
  if (result) body[`${action}Result`] = result;
  body.ResponseMetadata = { RequestId: requestId };
  return builder.build({ [`${action}Response`]: body });
}

export function errorXml(error: SnsError, requestId: string): string {
  return builder.build({
    ErrorResponse: {
      "@_xmlns": NAMESPACE,
      Error: { Type: error.type, Code: error.code, Message: error.message },
      RequestId: requestId,
    },
  });
}

/** SNS renders attribute maps as `<entry><key/><value/></entry>` pairs. */
export function attributeEntries(attributes: Record<string, string>): XmlObject {
  return { entry: Object.entries(attributes).map(([key, value]) => ({ key, value })) };
}
