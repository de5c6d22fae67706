import { usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { REPUBLISH_DEFAULT_RATE } from "../settings.js";
import { UUID } from "./dead-rows-command.js";

/**
 * How old a row a run may send: a replay of an event whose inbox row a consumer has since deleted
 * (CONSUMER_INBOX_RETENTION_HOURS after it processed it) is applied again. Either the consumers'
 * retention, in hours (rows published longer ago than that are refused), or "allow-reapply": the
 * operator accepts that.
 */
export type ReapplyGuard = { readonly inboxRetentionHours: number } | "allow-reapply";

/** What `relay republish` was asked: a new run over a range, or the rest of a run killed half-way. */
export type RepublishRequest = (
  | {
      readonly kind: "new";
      readonly from: string;
      readonly to: string | undefined;
      readonly topic: string | undefined;
      readonly orderingKey: string | undefined;
      readonly rate: number;
    }
  | { readonly kind: "resume"; readonly id: string; readonly rate: number | undefined }
) & { readonly reapply: ReapplyGuard };

/** A timestamp with its zone: without one, "10:00" would be the host's local time. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * Whether `text` is a timestamp with its zone, as `--from` and `--to` take it (and the console's
 * form). Date.parse rolls a day past the month's end over (2026-02-30 is March 2nd) where Postgres
 * refuses it (22008), so the date is checked against the calendar too.
 */
export function timestampWithZone(text: string): boolean {
  if (!TIMESTAMP.test(text) || Number.isNaN(Date.parse(text))) return false;
  const [year, month, day] = text.slice(0, 10).split("-").map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function timestampOption(
  usage: string,
  name: string,
  value: string | boolean | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !timestampWithZone(value)) {
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

/** `--inbox-retention-hours H` or `--allow-reapply`: one of them, always (see ReapplyGuard). */
function reapplyGuard(
  values: Readonly<Record<string, string | boolean | undefined>>,
  usage: string,
): ReapplyGuard {
  const hours = values["inbox-retention-hours"];
  if (values["allow-reapply"] !== undefined) {
    if (hours !== undefined) {
      return usageError(usage, "--allow-reapply and --inbox-retention-hours exclude each other");
    }
    return "allow-reapply";
  }
  if (hours === undefined) {
    return usageError(
      usage,
      "name the consumers' inbox retention with --inbox-retention-hours H (their CONSUMER_INBOX_RETENTION_HOURS, the smallest): rows older than it may have lost their inbox rows and would apply their effects again; or --allow-reapply",
    );
  }
  return { inboxRetentionHours: wholeNumberOption(usage, "inbox-retention-hours", hours, 1, 1) };
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
    return { kind: "resume", id: resume.toLowerCase(), rate, reapply: reapplyGuard(values, usage) };
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
    reapply: reapplyGuard(values, usage),
  };
}
