import { ApiError } from "./errors.js";

// Visible ASCII, as payment APIs take it (a UUID is the usual key); 255 like Stripe's limit.
const validKey = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key header, or undefined without one; a malformed key is a 400. */
export function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !validKey.test(header))
    throw new ApiError(400, "Idempotency-Key must be one header of 1 to 255 visible ASCII characters");
  return header;
}
