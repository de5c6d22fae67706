/**
 * Paths pino removes before a line is written. Config objects are logged whole at start-up, and AWS SDK
 * errors carry request headers, so both shapes are covered.
 */
export const redactedPaths = [
  "password",
  "*.password",
  "databaseUrl",
  "*.databaseUrl",
  "secretAccessKey",
  "*.secretAccessKey",
  "*.*.secretAccessKey",
  "sessionToken",
  "*.sessionToken",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "*.headers.Authorization",
  "headers.Authorization",
  'headers["x-amz-security-token"]',
  '*.headers["x-amz-security-token"]',
];

const credentialsInUrl = /\b([a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]+):[^@/?#\s]+@/gi;
const awsAccessKey = /\b(AKIA|ASIA)[A-Z0-9]{16}\b/g;

/** Masks secrets that hide inside free text: `postgres://user:pw@host` and AWS access key ids. */
export function maskSecretsInText(text: string): string {
  return text.replace(credentialsInUrl, "$1:[REDACTED]@").replace(awsAccessKey, "$1[REDACTED]");
}
