import { ApiError } from "./errors.js";

/** The body limit of every request (Fastify's `bodyLimit`); docs/api.md states it. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Keys that rewrite an object's prototype when a body is merged into another object somewhere
 * downstream: refused by name, not passed on (the body is valid JSON, so "not valid JSON" would lie).
 */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === "__proto__") throw new ApiError(400, 'the body must not contain a "__proto__" key');
  if (
    key === "constructor" &&
    typeof value === "object" &&
    value !== null &&
    Object.hasOwn(value, "prototype")
  )
    throw new ApiError(400, 'the body must not contain a "constructor" key holding a "prototype"');
  return value;
}

/** An application/json body, or an ApiError (400) saying what is wrong with it. */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new ApiError(400, "the body is empty: send a JSON object");
  try {
    return JSON.parse(text, refusePrototypeKeys);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(400, `the body is not valid JSON (${(error as Error).message})`);
  }
}
