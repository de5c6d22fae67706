import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { Logger } from "pino";
import { ConfigError } from "../config/config-error.js";
import { traceAwsCalls } from "../telemetry/aws-call-spans.js";

/**
 * The password a new connection authenticates with, read again from Secrets Manager when it may have
 * changed. ECS injects DATABASE_URL once, when the task starts: after a rotation that copy is stale,
 * and every connection the pool opens from then on (at the latest when its lifetime,
 * DB_POOL_MAX_LIFETIME_SECONDS, replaces one) would be refused until the next deploy. Connections
 * already open keep working: Postgres checks a password only when a session starts.
 */
export interface RotatingPassword {
  /** What a connection about to authenticate sends; pg calls it once per connection. */
  current(): Promise<string>;
  /** Postgres refused the password (28P01): the next connection reads the secret first. */
  refused(): void;
}

export interface RotatingPasswordOptions {
  /** DATABASE_SECRET_ARN: the secret holding a URL or a JSON document with a `password`. */
  readonly secretArn: string;
  /** DATABASE_URL: its password is what a connection sends until the secret is read. */
  readonly databaseUrl: string;
  /**
   * DB_CONNECT_TIMEOUT_MS. pg asks for the password after the TCP and TLS handshakes, on the same
   * connect timer: a read the connection waits for gets half of it, so the connection can still
   * finish with the password it has when Secrets Manager does not answer.
   */
  readonly connectTimeoutMs: number;
  readonly log: Pick<Logger, "info" | "warn">;
  /** Endpoint override (tests, the local stack); else AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS's. */
  readonly endpoint?: string;
}

/**
 * How old a password read may be before it is read again, in the background: a connection never
 * waits for that read, only for one after a refusal. A minute keeps Secrets Manager's calls to about
 * one per minute per task, and a rotation's window of refused connections to that minute at most
 * (RDS's rotation changes the password, then the secret, seconds apart; a refusal re-reads at once).
 */
const REREAD_AFTER_MS = 60_000;
/** A password refused over and over (a wrong secret) must not turn every connect into an API call. */
const REFUSED_REREAD_AT_MOST_EVERY_MS = 1_000;

const secretArnPattern = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):\d{12}:secret:.+$/;

/**
 * The password in a secret's text: a Postgres URL's, or a JSON document's `password`, which is all
 * RDS's own master-user secret holds besides `username` (a full RDS secret has the host too).
 */
function passwordIn(text: string): string | { readonly problem: string } {
  if (text.trimStart().startsWith("{")) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { problem: "the secret's JSON does not parse" };
    }
    const password = (value as { password?: unknown } | null)?.password;
    return typeof password === "string" && password !== ""
      ? password
      : { problem: "the secret's JSON has no password" };
  }
  if (!URL.canParse(text)) return { problem: "the secret is neither a Postgres URL nor a JSON document" };
  return decodeURIComponent(new URL(text).password);
}

export function rotatingPassword(options: RotatingPasswordOptions): RotatingPassword {
  const region = secretArnPattern.exec(options.secretArn)?.[1];
  if (region === undefined) {
    throw new ConfigError([
      { env: "DATABASE_SECRET_ARN", message: `"${options.secretArn}" is not a Secrets Manager secret ARN` },
    ]);
  }
  const readTimeoutMs = Math.max(1, Math.floor(options.connectTimeoutMs / 2));
  const client = traceAwsCalls(
    new SecretsManagerClient({
      region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      maxAttempts: 1,
      requestHandler: { connectionTimeout: readTimeoutMs, requestTimeout: readTimeoutMs },
    }),
  );
  const initial = passwordIn(options.databaseUrl);
  let password = typeof initial === "string" ? initial : "";
  let readAt = 0;
  let refusedAt = 0;
  let mustRead = true;
  let reading: Promise<string> | undefined;

  async function read(): Promise<string> {
    const startedAt = Date.now();
    try {
      const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: options.secretArn }), {
        abortSignal: AbortSignal.timeout(readTimeoutMs),
      });
      const found = passwordIn(SecretString ?? "");
      if (typeof found !== "string") {
        options.log.warn(
          { secretArn: options.secretArn, reason: found.problem },
          "database secret unusable: the last password stays in use",
        );
      } else {
        if (found !== password) {
          options.log.info(
            { secretArn: options.secretArn },
            "database password changed: new connections use the new one",
          );
        }
        password = found;
      }
    } catch (error) {
      options.log.warn(
        { err: error, secretArn: options.secretArn },
        "database secret not read: the last password stays in use",
      );
    } finally {
      readAt = Date.now();
      // A refusal while this read was out may be of the password it just brought: read again then.
      if (refusedAt < startedAt) mustRead = false;
      reading = undefined;
    }
    return password;
  }

  return {
    current() {
      reading ??= mustRead || Date.now() - readAt >= REREAD_AFTER_MS ? read() : undefined;
      // Only a refused password (or the first connection) is worth waiting for: otherwise the one
      // in hand is very likely right, and the read refreshes it for the next connection.
      return mustRead && reading !== undefined ? reading : Promise.resolve(password);
    },
    refused() {
      const now = Date.now();
      if (now - refusedAt < REFUSED_REREAD_AT_MOST_EVERY_MS) return;
      refusedAt = now;
      mustRead = true;
    },
  };
}
