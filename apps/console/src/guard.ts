import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

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

/** Who a request is, when it may come in; undefined: answer 401. */
export type Who = string;

/**
 * Who the request's credentials name, or undefined when they do not carry the token. With no token
 * configured (a console on loopback) everyone is `local`. A browser gives the token as basic auth's
 * password (its user name is who acted, for the log); a script as `Authorization: Bearer TOKEN`.
 */
export function authenticate(authorization: string | undefined, token: string): Who | undefined {
  if (token === "") return "local";
  if (authorization === undefined) return undefined;
  const [scheme = "", credentials = ""] = authorization.split(" ", 2);
  if (scheme.toLowerCase() === "bearer") return sameSecret(credentials, token) ? "bearer" : undefined;
  if (scheme.toLowerCase() !== "basic") return undefined;
  const decoded = Buffer.from(credentials, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  const user = decoded.slice(0, colon);
  if (!sameSecret(decoded.slice(colon + 1), token)) return undefined;
  // Capped and plain: it goes into log lines.
  return user.replace(/[^\w.@-]/g, "_").slice(0, 64) || "basic";
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
