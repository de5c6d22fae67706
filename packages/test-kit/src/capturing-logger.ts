import { Writable } from "node:stream";
import { createLogger, type Logger } from "@outbox/shared";
import type { LogLine } from "./log-lines.js";

export interface CapturedLog {
  /** The daemons' own logger (createLogger: level labels, redaction, masking), writing here instead of stdout. */
  readonly log: Logger;
  /** Each line parsed. */
  readonly lines: LogLine[];
  /** Each line as written (JSON text): what a check of a line's size or of a leak reads. */
  readonly written: string[];
}

/** A logger whose lines a test reads; `level` as LOG_LEVEL takes it (info unless given). */
export function capturingLogger(level = "info"): CapturedLog {
  const lines: LogLine[] = [];
  const written: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) {
        written.push(line);
        lines.push(JSON.parse(line) as LogLine);
      }
      done();
    },
  });
  return { log: createLogger({ service: "test", version: "0", level, destination }), lines, written };
}
