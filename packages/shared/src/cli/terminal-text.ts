/**
 * What a terminal would act on instead of print: C0 controls (ESC starts ANSI and OSC sequences, OSC
 * 52 writes the clipboard), DEL, C1 controls (U+009B and U+009D are CSI and OSC on their own), and
 * the invisible characters that reorder or hide text (bidirectional overrides and isolates,
 * zero-width characters, line and paragraph separators, the byte-order mark). The backslash too, so
 * that an escape shown can never be told apart from a backslash the text really had.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\\]/g;

function visible(character: string): string {
  if (character === "\\") return "\\\\";
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/**
 * The one way text from a message (an id, an event type, a reason) reaches an operator's terminal or
 * browser, whatever the command's output (a table, JSON lines): every control or invisible character
 * made visible as an escape (`\x1b`, `\u{202e}`), then cut to `maxChars` with its full length said
 * (`…… (5095 chars)`), so one message can neither drive the terminal nor flood the screen.
 */
export function forTerminal(text: string, maxChars: number): string {
  const escaped = text.replace(UNSAFE, visible);
  if (escaped.length <= maxChars) return escaped;
  // Not between the halves of a surrogate pair.
  const lastCode = escaped.charCodeAt(maxChars - 1);
  const end = lastCode >= 0xd800 && lastCode <= 0xdbff ? maxChars - 1 : maxChars;
  return `${escaped.slice(0, end)}… (${text.length} chars)`;
}
