import { createRequire } from "node:module";
import { describeError } from "@outbox/client/internal";
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { traceFields } from "../telemetry/log-trace-fields.js";
import { maskedCopy, maskedFields } from "./masked-copy.js";
import { maskSecretsInText, redactedPaths } from "./redaction.js";

export type { Logger } from "pino";

export interface LoggerSettings {
  readonly service: string;
  readonly version: string;
  readonly level?: string;
  /** Defaults to stdout; tests pass a stream to read what was written. */
  readonly destination?: DestinationStream;
}

/** pino-pretty is a dev dependency: a container image without it still logs JSON. */
function prettyStreamWhenInteractive(): DestinationStream | undefined {
  if (!process.stdout.isTTY) return undefined;
  try {
    const require = createRequire(import.meta.url);
    const pretty = require("pino-pretty") as (options: Record<string, unknown>) => DestinationStream;
    return pretty({ sync: true, colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" });
  } catch {
    return undefined;
  }
}

/**
 * The message strings masked. A line given an error and no message would take the error's message
 * as it is (pino reads it before any formatter runs, and a getter of a hostile value may throw
 * there): the masked description is passed as the message instead.
 */
function maskedArguments(args: readonly unknown[]): unknown[] {
  const masked = args.map((arg) => (typeof arg === "string" ? maskSecretsInText(arg) : arg));
  const [first] = masked;
  if (masked.length !== 1 || typeof first !== "object" || first === null) return masked;
  const error = errorOfLine(first);
  return error === undefined ? masked : [first, maskSecretsInText(describeError(error))];
}

/** The error pino would take a line's message from: the value itself, or its `err` when it has no `msg`. */
function errorOfLine(value: object): unknown {
  try {
    if (value instanceof Error) return value;
    const { err, msg } = value as { err?: unknown; msg?: unknown };
    return err !== undefined && err !== null && msg === undefined ? err : undefined;
  } catch {
    // A hostile value: its fields are read again, safely, by the masked copy.
    return undefined;
  }
}

/**
 * The one logger factory. Base fields `service` and `version` are on every line, `trace_id` and
 * `span_id` on lines written inside a span; secrets are removed by path and masked inside strings;
 * output is synchronous so the last line before exit is never lost.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    base: { service: settings.service, version: settings.version },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceFields,
    redact: { paths: redactedPaths, censor: "[REDACTED]" },
    // Masked on the way out, however deep: fields and child bindings (formatters), errors wherever
    // they are (pino's `err` serializer is replaced by the masked copy, which serializes them alike).
    serializers: { err: maskedCopy },
    formatters: {
      level: (label) => ({ level: label }),
      bindings: maskedFields,
      log: maskedFields,
    },
    hooks: {
      logMethod(args, method) {
        method.apply(this, maskedArguments(args) as Parameters<typeof method>);
      },
    },
  };
  const destination =
    settings.destination ?? prettyStreamWhenInteractive() ?? pino.destination({ sync: true });
  return pino(options, destination);
}
