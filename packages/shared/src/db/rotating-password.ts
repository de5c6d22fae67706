import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { Logger } from "pino";
import { ConfigError } from "../config/config-error.js";
import { rdsSecretUrl } from "../config/rds-secret.js";
import { traceAwsCalls } from "../telemetry/aws-call-spans.js";

/**
 * The password a new connection authenticates with, read again from Secrets Manager when it may have
 * changed. ECS injects DATABASE_URL once, when the task starts: after a rotation that copy is stale,
 * and every connection the pool opens from then on (at the latest when the 300 s lifetime replaces
 * one) would be refused until the next deploy. Connections already open keep working: Postgres checks
 * a password only when a session starts.
 */
export interface RotatingPassword {
  /** What a connection about to authenticate sends; pg calls it once per connection. */
  current(): Promise<string>;
  /** Postgres refused the password (28P01): the next connection reads the secret first. */
  refused(): void;
}

export interface RotatingPasswordOptions {
  /** DATABASE_SECRET_ARN: the secret holding a URL or an RDS secret's JSON. */
  readonly secretArn: string;
  /** The password DATABASE_URL came with: what a connection sends until the secret is read. */
  readonly initial: string;
  /** Bounds each GetSecretValue (DB_CONNECT_TIMEOUT_MS: the read is part of opening a connection). */
  readonly timeoutMs: number;
  readonly log: Pick<Logger, "info" | "warn">;
  /** Endpoint override (tests, the local stack); else AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS's. */
  readonly endpoint?: string;
}

/**
 * How old a password read may be before a new connection reads it again. A minute keeps Secrets
 * Manager's calls to about one per minute per task under the pool's churn, and a rotation's
 * window of refused connections to that minute at most (RDS's rotation changes the password, then the
 * secret, seconds apart; a refusal in between re-reads at once).
 */
const REREAD_AFTER_MS = 60_000;
/** A password refused over and over (a wrong secret) must not turn every connect into an API call. */
const REFUSED_REREAD_AT_MOST_EVERY_MS = 1_000;

const secretArnPattern = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):\d{12}:secret:.+$/;

/** The region in a Secrets Manager ARN, or undefined when it is not one. */
export function secretArnRegion(arn: string): string | undefined {
  return secretArnPattern.exec(arn)?.[1];
}

/** The password in a secret's text: a Postgres URL's, or an RDS secret JSON's `password`. */
export function passwordInSecret(text: string): string | { readonly problem: string } {
  const url = text.trimStart().startsWith("{") ? rdsSecretUrl(text) : { url: text };
  if ("problem" in url) return url;
  if (!URL.canParse(url.url))
    return { problem: "the secret is neither a Postgres URL nor an RDS secret's JSON" };
  return decodeURIComponent(new URL(url.url).password);
}

export function rotatingPassword(options: RotatingPasswordOptions): RotatingPassword {
  const region = secretArnRegion(options.secretArn);
  if (region === undefined) {
    throw new ConfigError([
      { env: "DATABASE_SECRET_ARN", message: `"${options.secretArn}" is not a Secrets Manager secret ARN` },
    ]);
  }
  const client = traceAwsCalls(
    new SecretsManagerClient({
      region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      maxAttempts: 1,
      requestHandler: { connectionTimeout: options.timeoutMs, requestTimeout: options.timeoutMs },
    }),
  );
  let password = options.initial;
  let readAt = 0;
  let refusedAt = 0;
  let reading: Promise<string> | undefined;

  async function read(): Promise<string> {
    try {
      const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: options.secretArn }), {
        abortSignal: AbortSignal.timeout(options.timeoutMs),
      });
      const found = passwordInSecret(SecretString ?? "");
      if (typeof found !== "string") {
        options.log.warn(
          { secretArn: options.secretArn, reason: found.problem },
          "database secret unusable: the last password stays in use",
        );
        return password;
      }
      if (found !== password)
        options.log.info(
          { secretArn: options.secretArn },
          "database password changed: new connections use the new one",
        );
      password = found;
      return password;
    } catch (error) {
      // A connection must not wait on Secrets Manager being down: the password it has may still be right.
      options.log.warn(
        { err: error, secretArn: options.secretArn },
        "database secret not read: the last password stays in use",
      );
      return password;
    } finally {
      readAt = Date.now();
      reading = undefined;
    }
  }

  return {
    current() {
      if (reading !== undefined) return reading;
      if (Date.now() - readAt < REREAD_AFTER_MS) return Promise.resolve(password);
      reading = read();
      return reading;
    },
    refused() {
      const now = Date.now();
      if (now - refusedAt < REFUSED_REREAD_AT_MOST_EVERY_MS) return;
      refusedAt = now;
      readAt = 0;
    },
  };
}
