import type { ChildProcess } from "node:child_process";

export type LogLine = Record<string, unknown> & { msg?: string };

/**
 * Reads a daemon's stdout as pino JSON lines into `lines` (a line that is not JSON is kept as
 * text), calling `onLines` after each chunk.
 */
export function collectLogLines(child: ChildProcess, lines: LogLine[], onLines: () => void = () => {}): void {
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split("\n");
    pending = parts.pop() ?? "";
    for (const part of parts) {
      if (!part.trim()) continue;
      try {
        lines.push(JSON.parse(part) as LogLine);
      } catch {
        lines.push({ msg: "(unparsed stdout)", text: part });
      }
    }
    onLines();
  });
}
