/** What can be said of a thrown value without running any of its code that might throw. */
export interface ThrownParts {
  /** The Error's name (`TypeError`); undefined for a value that is not an Error. */
  readonly name: string | undefined;
  readonly message: string;
  readonly stack: string | undefined;
}

// Anything may be thrown: an Object.create(null) (String() finds no toString), an object whose
// toString or message getter throws, a revoked Proxy. Describing it must never throw, or the code
// that handles a failure crashes on it instead.
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function stringProperty(value: object, key: "name" | "message" | "stack"): string | undefined {
  const read = attempt(() => (value as Record<string, unknown>)[key]);
  return typeof read === "string" ? read : undefined;
}

function isErrorLike(value: object): boolean {
  return attempt(() => value instanceof Error) === true || stringProperty(value, "message") !== undefined;
}

function describeOther(value: unknown): string {
  const text = attempt(() => String(value));
  if (text !== undefined && text !== "[object Object]") return text;
  // A plain object says more as JSON ({"code":42}) than as [object Object].
  const json = attempt(() => JSON.stringify(value));
  if (typeof json === "string") return json;
  if (text !== undefined) return text;
  const tag = attempt(() => Object.prototype.toString.call(value));
  return tag ?? `a thrown ${typeof value} that cannot be described`;
}

/** The message of an Error (or an error-like object), else the value as text; never throws. */
export function thrownParts(value: unknown): ThrownParts {
  if (typeof value === "object" && value !== null && isErrorLike(value)) {
    return {
      name: stringProperty(value, "name"),
      message: stringProperty(value, "message") ?? describeOther(value),
      stack: stringProperty(value, "stack"),
    };
  }
  return { name: undefined, message: describeOther(value), stack: undefined };
}

/**
 * The one way to turn a caught value into text: an Error's message, a string as is, anything else
 * as String() gives it (JSON for a plain object). Never throws, whatever was thrown.
 */
export function describeError(value: unknown): string {
  return thrownParts(value).message;
}
