import { isTimestampWithZone, isUuid } from "@outbox/shared";
import { usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { REPUBLISH_DEFAULT_RATE } from "../settings.js";

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

function timestampOption(
  usage: string,
  name: string,
  value: string | boolean | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !isTimestampWithZone(value)) {
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
    if (typeof resume !== "string" || !isUuid(resume)) {
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
