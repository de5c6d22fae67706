/**
 * Rows as a plain-text table for people, the commands' text output: columns padded to their widest
 * cell, numbers (`numeric` column indexes) right-aligned, text left-aligned, two spaces apart.
 */
export function renderTable(rows: readonly (readonly string[])[], numeric: ReadonlySet<number>): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return `${rows
    .map((row) =>
      row
        .map((cell, column) =>
          numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}
