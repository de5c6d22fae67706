import { describe, expect, it } from "vitest";
import { forTerminal } from "../src/index.js";

describe("forTerminal", () => {
  it("makes every control and invisible character visible, so none reaches the terminal", () => {
    // OSC 52 (write the clipboard), a CSI colour, a C1 CSI, a bidi override, a zero-width space, a newline.
    const hostile = "a\u001b]52;c;ZWNobyBoaQ==\u0007b\u001b[31mc\u009b2Jd\u202ee\u200bf\ng";
    const shown = forTerminal(hostile, 1_000);
    expect(shown).toBe("a\\x1b]52;c;ZWNobyBoaQ==\\x07b\\x1b[31mc\\x9b2Jd\\u{202e}e\\u{200b}f\\x0ag");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may be left
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e]/);
  });

  it("keeps a backslash the text had apart from an escape it shows", () => {
    expect(forTerminal("\\x1b", 100)).toBe("\\\\x1b");
    expect(forTerminal("\u001b", 100)).toBe("\\x1b");
  });

  it("leaves ordinary text, accents and emoji as they are", () => {
    expect(forTerminal("order.placed — Zürich 🚲", 100)).toBe("order.placed — Zürich 🚲");
  });

  it("cuts long text and says its full length", () => {
    const shown = forTerminal("x".repeat(5_095), 60);
    expect(shown).toBe(`${"x".repeat(60)}… (5095 chars)`);
    // Never between the halves of a surrogate pair.
    expect(forTerminal(`${"x".repeat(59)}🚲🚲`, 60)).toBe(`${"x".repeat(59)}… (63 chars)`);
  });
});
