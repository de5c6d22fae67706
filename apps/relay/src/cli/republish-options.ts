import { usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { REPUBLISH_DEFAULT_RATE } from "../settings.js";

/** What `relay republish` was asked: a new run over a range, or the rest of a run killed half-way. */
export type RepublishRequest =
  | {
      readonly kind: "new";
      readonly from: string;
      readonly to: string | undefined;
      readonly topic: string | undefined;
      readonly orderingKey: string | undefined;
      readonly rate: number;
    }
  | { readonly kind: "resume"; readonly id: string; readonly rate: number | undefined };

/** A timestamp with its zone: without one, "10:00" would be the host's local time. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function timestampOption(
  usage: string,
  name: string,
  value: string | boolean | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !TIMESTAMP.test(value) || Number.isNaN(Date.parse(value))) {
    return usageError(
      usage,
      `--${name} needs a timestamp with its zone, e.g. 2026-12-01T10:00:00Z, got "${String(value)}"`,
    );
  }
  return value;
}

function textOption(usage: string, name: string, value: string | boolean | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") return usageError(usage, `--${name} needs a value`);
  return value;
}

/** The options as a request; a bad or contradictory one is a usage error (exit 64) before anything runs. */
export function parseRepublishOptions(
  values: Readonly<Record<string, string | boolean | undefined>>,
  usage: string,
): RepublishRequest {
  const rate = values.rate === undefined ? undefined : wholeNumberOption(usage, "rate", values.rate, 1, 1);
  const resume = values.resume;
  if (resume !== undefined) {
    if (typeof resume !== "string" || !UUID.test(resume)) {
      return usageError(usage, `--resume needs a run id (a UUID), got "${String(resume)}"`);
    }
    const given = ["from", "to", "topic", "key"].filter((name) => values[name] !== undefined);
    if (given.length > 0) {
      return usageError(usage, `--resume continues the run's own range: drop --${given.join(", --")}`);
    }
    return { kind: "resume", id: resume.toLowerCase(), rate };
  }
  const from = timestampOption(usage, "from", values.from);
  if (from === undefined) return usageError(usage, "--from is required (or --resume RUN)");
  const to = timestampOption(usage, "to", values.to);
  if (to !== undefined && Date.parse(to) <= Date.parse(from)) {
    return usageError(usage, `--to (${to}) must be later than --from (${from})`);
  }
  return {
    kind: "new",
    from,
    to,
    topic: textOption(usage, "topic", values.topic),
    orderingKey: textOption(usage, "key", values.key),
    rate: rate ?? REPUBLISH_DEFAULT_RATE,
  };
}
