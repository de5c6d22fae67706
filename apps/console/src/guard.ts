import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Operator } from "./operators.js";

/**
 * Every response's security headers. The Content-Security-Policy allows the console's own script,
 * style and images and nothing else: no inline script or style attribute, no other origin, no frame
 * around it, no form posting elsewhere; so a text from a message that escaped its escaping still
 * could not run.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // Not no-referrer: under it a browser sends `Origin: null` with the console's own form posts.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** The cookie holding the double-submit CSRF token; SameSite=Strict already keeps it off cross-site posts. */
export const CSRF_COOKIE = "outbox_console_csrf";

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Equal, in a time that does not tell how much of `given` matched. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The operator whose name and password these are; undefined otherwise. Every listed password is
 * compared (in constant time), so the answer's time does not tell whether the name exists.
 */
export function operatorFor(
  operators: readonly Operator[],
  name: string,
  password: string,
): Operator | undefined {
  let found: Operator | undefined;
  for (const operator of operators) {
    const matches = sameSecret(password, operator.password);
    if (matches && operator.name === name) found = operator;
  }
  return found;
}

/**
 * Who a request is, when it may come in (undefined: answer 401). `who` is a name only an operator
 * of CONSOLE_USERS has (their password proved it): the token is one secret for everyone, and a
 * loopback console asks for nothing, so neither names anyone.
 */
export interface Identity {
  readonly who: string | undefined;
  /** A read-only operator: the console is read-only for them. */
  readonly readOnly: boolean;
}

/** What a request may show to come in: the token, the operators, or neither (a loopback console). */
export interface Credentials {
  /** CONSOLE_TOKEN; "" for none. */
  readonly token: string;
  /** CONSOLE_USERS; empty for none. */
  readonly operators: readonly Operator[];
}

/** Whether the console asks for anything: without, it answers on a loopback name only. */
export function asksCredentials(credentials: Credentials): boolean {
  return credentials.token !== "" || credentials.operators.length > 0;
}

/**
 * Who the request's credentials name, or undefined when they prove nothing asked for. A browser
 * gives basic auth: an operator's name and password, or (any name) the token as the password; a
 * script gives `Authorization: Bearer TOKEN`.
 */
export function authenticate(
  authorization: string | undefined,
  credentials: Credentials,
): Identity | undefined {
  const { token, operators } = credentials;
  if (!asksCredentials(credentials)) return { who: undefined, readOnly: false };
  if (authorization === undefined) return undefined;
  const [scheme = "", given = ""] = authorization.split(" ", 2);
  if (scheme.toLowerCase() === "bearer") {
    return token !== "" && sameSecret(given, token) ? { who: undefined, readOnly: false } : undefined;
  }
  if (scheme.toLowerCase() !== "basic") return undefined;
  const decoded = Buffer.from(given, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  const password = decoded.slice(colon + 1);
  const operator = operatorFor(operators, decoded.slice(0, colon), password);
  if (operator !== undefined) return { who: operator.name, readOnly: operator.access === "read-only" };
  return token !== "" && sameSecret(password, token) ? { who: undefined, readOnly: false } : undefined;
}

/**
 * Whether a browser says the request comes from another site's page (Sec-Fetch-Site: cross-site or
 * same-site): a link, an image, a form of someone else's. Only the console's own pages
 * (same-origin) and what the person typed or bookmarked (none) come in; a client that does not
 * send the header (curl, a script) is not a browser led by another page.
 */
export function fromAnotherSite(secFetchSite: string | undefined): boolean {
  return secFetchSite !== undefined && secFetchSite !== "same-origin" && secFetchSite !== "none";
}

/** A fresh CSRF token: 32 random bytes. */
export function newCsrfToken(): string {
  return randomBytes(32).toString("base64url");
}

/** The CSRF token of the request's cookie, if it carries one of the right shape. */
export function csrfCookie(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === CSRF_COOKIE && value !== undefined && /^[\w-]{43}$/.test(value)) return value;
  }
  return undefined;
}

/**
 * Whether a POST is the console's own form: its field matches its cookie (a cross-site page can
 * neither read the cookie nor set it), and a browser that says where the request comes from says
 * it comes from this very origin.
 */
export function sameOriginPost(
  headers: {
    readonly cookie?: string;
    readonly host?: string;
    readonly origin?: string;
    readonly "sec-fetch-site"?: string;
  },
  field: string | null,
): boolean {
  const cookie = csrfCookie(headers.cookie);
  if (cookie === undefined || field === null || !sameSecret(field, cookie)) return false;
  if (headers["sec-fetch-site"] !== undefined && headers["sec-fetch-site"] !== "same-origin") return false;
  if (headers.origin === undefined) return true;
  return URL.canParse(headers.origin) && new URL(headers.origin).host === headers.host;
}

/**
 * Whether a console that asks for no token (it listens on loopback) may answer a request for
 * `host`: only under a loopback name, so that a web page whose name an attacker re-points at
 * 127.0.0.1 (DNS rebinding) reaches nothing.
 */
export function loopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : (host.split(":")[0] ?? "");
  return name === "localhost" || name === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(name);
}
