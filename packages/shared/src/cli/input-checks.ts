/**
 * Checks of what an operator types (a command's flags, the console's forms), shared so both refuse
 * the same text with the same reason before Postgres sees it: a value Postgres refuses reads as an
 * error of the database (22008, 22P02, 22021), not as a mistake of the input.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` is a UUID: 32 hex digits in the 8-4-4-4-12 form (any case), as Postgres's uuid takes it. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** A timestamp with its zone: without one, "10:00" would be the host's local time. */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?)$/i;

/**
 * Whether `text` is a timestamp with its zone whose every field exists: 2026-02-30 or 24:00 are
 * not (Date.parse takes the first, rolling it into March; Postgres refuses it).
 */
export function isTimestampWithZone(text: string): boolean {
  const parts = TIMESTAMP.exec(text);
  if (parts === null) return false;
  const [year, month, day, hour, minute, second = 0, zoneHour = 0, zoneMinute = 0] = parts
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  if (year === undefined || month === undefined || day === undefined) return false;
  if (hour === undefined || minute === undefined) return false;
  // Day 0 of the next month is the last of this one.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    zoneHour <= 15 &&
    zoneMinute <= 59
  );
}

/** Whether `text` holds a control character (C0, DEL, C1): Postgres's text cannot hold NUL, and none is typed. */
export function hasControlCharacter(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
  return /[\u0000-\u001f\u007f-\u009f]/.test(text);
}
