import { createRequire } from "node:module";
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { traceFields } from "../telemetry/log-trace-fields.js";
import { maskSecretsInFields, maskSecretsInText, redactedPaths } from "./redaction.js";

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
    formatters: {
      level: (label) => ({ level: label }),
      log: (fields) => maskSecretsInFields(fields),
    },
    hooks: {
      logMethod(args, method) {
        const masked = args.map((arg) => (typeof arg === "string" ? maskSecretsInText(arg) : arg));
        method.apply(this, masked as Parameters<typeof method>);
      },
    },
  };
  const destination =
    settings.destination ?? prettyStreamWhenInteractive() ?? pino.destination({ sync: true });
  return pino(options, destination);
}
