import type { SettingsSpec } from "./setting.js";

function defaultCell(definition: SettingsSpec[string]): string {
  if (definition.defaultLabel !== undefined) return definition.defaultLabel;
  if (definition.default === undefined) return "*(required)*";
  if (typeof definition.default === "object") {
    const entries = Object.entries(definition.default as Record<string, string>);
    return entries.length === 0 ? "*(empty)*" : `\`${entries.map(([k, v]) => `${k}=${v}`).join(",")}\``;
  }
  return `\`${String(definition.default)}\``;
}

function descriptionCell(definition: SettingsSpec[string]): string {
  if (definition.formerEnv === undefined) return definition.description;
  return `${definition.description} Formerly \`${definition.formerEnv}\`, still read (with a warning at start-up) for one release.`;
}

/** The Markdown table of a settings spec, as committed in the daemon pages under docs/. */
export function renderConfigTable(spec: SettingsSpec): string {
  const rows = Object.values(spec).map(
    (definition) =>
      `| \`${definition.env}\` | ${definition.type} | ${definition.unit || "—"} | ${defaultCell(definition)} | ${descriptionCell(definition)} |`,
  );
  return ["| Variable | Type | Unit | Default | Description |", "|---|---|---|---|---|", ...rows].join("\n");
}

export const CONFIG_TABLE_START = "<!-- config-table:start -->";
export const CONFIG_TABLE_END = "<!-- config-table:end -->";

/** Puts `table` between the page's config-table markers; throws if the page has no markers. */
export function withConfigTable(page: string, table: string): string {
  const start = page.indexOf(CONFIG_TABLE_START);
  const end = page.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`page has no ${CONFIG_TABLE_START} … ${CONFIG_TABLE_END} markers`);
  return `${page.slice(0, start + CONFIG_TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}
