/**
 * JSON.parse, with the reason a text is not JSON in our own words. A poison reason is what operators
 * group dead letters by, so it must not follow the runtime's wording (Node 24's V8 appends
 * "(line 1 column 29)" to Node 22's "… in JSON at position 28") nor quote the text (V8 quotes a short
 * one whole: `Unexpected token 'a', "alice@example.com" is not valid JSON`), which is the
 * application's data. What is kept of V8's message is the one fact in it: the position.
 */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const position = /\bat position (\d+)\b/.exec(error instanceof Error ? error.message : "")?.[1];
    return {
      ok: false,
      error: position === undefined ? "not valid JSON" : `not valid JSON at position ${position}`,
    };
  }
}
