import type { Setting } from "./setting.js";

/**
 * A library option that the daemon reads from a setting (`createRelay({ batchSize })` is
 * RELAY_BATCH_SIZE): the setting's default when the option is not given, otherwise the value checked
 * by the setting's own rules. A value the daemon refuses at start-up is refused here too, for the
 * same reason, and the library's defaults cannot drift from the documented ones.
 */
export function numericOption(
  definition: Setting<number>,
  given: number | undefined,
  name: string,
  invalid: (message: string) => Error,
): number {
  if (given === undefined) {
    if (definition.default === undefined) throw new Error(`${definition.env} has no default`);
    return definition.default;
  }
  const parsed = definition.schema.safeParse(String(given));
  if (parsed.success) return parsed.data;
  throw invalid(`${name} ${parsed.error.issues[0]?.message ?? "is invalid"}, got ${given}`);
}
