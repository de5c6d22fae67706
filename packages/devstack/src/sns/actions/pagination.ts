import { invalidParameter } from "../errors.js";

/** SNS list actions return 100 items per page; the token is an opaque resume offset. */
export function page<T>(items: T[], token: string | undefined): { items: T[]; nextToken?: string } {
  const start = token === undefined ? 0 : Number(Buffer.from(token, "base64url").toString());
  if (!Number.isInteger(start) || start < 0) throw invalidParameter("NextToken");
  const end = start + 100;
  return end < items.length
    ? { items: items.slice(start, end), nextToken: Buffer.from(String(end)).toString("base64url") }
    : { items: items.slice(start) };
}
