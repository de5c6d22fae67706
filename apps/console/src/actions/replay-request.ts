import { REPUBLISH_DEFAULT_RATE, type RepublishRequest } from "@outbox/relay/operations";
import { hasControlCharacter, isTimestampWithZone, isUuid } from "@outbox/shared";

function wholeNumber(text: string | null, name: string): number | string | undefined {
  if (text === null || text.trim() === "") return undefined;
  return /^\d{1,9}$/.test(text.trim()) && Number(text) >= 1
    ? Number(text)
    : `${name} must be a whole number ≥ 1`;
}

/**
 * A republish the Replays view's forms ask for, checked as `relay republish` checks its options: a
 * new run's range (timestamps with their zone, `to` after `from`), or the run to resume; the rate;
 * and always the consumers' inbox retention in hours, or allow-reapply (the safety rule of a replay).
 * A string says what is wrong (answered 400).
 */
export function parseReplayRequest(fields: URLSearchParams): RepublishRequest | string {
  const rate = wholeNumber(fields.get("rate"), "the rate");
  if (typeof rate === "string") return rate;
  const hours = wholeNumber(fields.get("retention"), "the inbox retention");
  if (typeof hours === "string") return hours;
  const allow = fields.get("allowReapply") === "on";
  if (allow && hours !== undefined) return "give the inbox retention or allow re-applying, not both";
  if (!allow && hours === undefined) {
    return "give the consumers' inbox retention in hours (their CONSUMER_INBOX_RETENTION_HOURS, the smallest): rows published longer ago may have lost their inbox rows and would apply their effects again; or allow re-applying";
  }
  const reapply = allow ? ("allow-reapply" as const) : { inboxRetentionHours: hours ?? 1 };
  const run = fields.get("run");
  if (run !== null && run !== "") {
    if (!isUuid(run)) return "the run to resume is not a run id";
    return { kind: "resume", id: run.toLowerCase(), rate, reapply };
  }
  const from = fields.get("from")?.trim() ?? "";
  const to = fields.get("to")?.trim() || undefined;
  if (!isTimestampWithZone(from))
    return "from needs a real timestamp with its zone, e.g. 2026-12-01T10:00:00Z";
  if (to !== undefined && !isTimestampWithZone(to))
    return "to needs a real timestamp with its zone, or nothing (now)";
  if (to !== undefined && Date.parse(to) <= Date.parse(from)) return "to must be later than from";
  const text = (name: string) => fields.get(name)?.trim().slice(0, 1_000) || undefined;
  if (hasControlCharacter(`${text("topic") ?? ""}${text("key") ?? ""}`))
    return "the topic or the ordering key holds a control character";
  return {
    kind: "new",
    from,
    to,
    topic: text("topic"),
    orderingKey: text("key"),
    rate: rate ?? REPUBLISH_DEFAULT_RATE,
    reapply,
  };
}
