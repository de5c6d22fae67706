import { z } from "zod";

// With the `u` flag a surrogate pair is one code point, so only an unpaired half matches.
const loneSurrogate = /\p{Cs}/u;

/**
 * What Postgres cannot store as text, refused before it gets there: a NUL (U+0000, which `text` and
 * `jsonb` reject: a 500 otherwise) and a lone UTF-16 surrogate (which `text` would store as U+FFFD
 * while the `json` payload keeps the `\ud83d` escape, so the photo and its event would disagree).
 */
export function storableText(field: string) {
  return z
    .string()
    .refine((text) => !text.includes("\u0000"), `${field} must not contain a NUL character (U+0000)`)
    .refine(
      (text) => !loneSurrogate.test(text),
      `${field} must be well-formed Unicode: it contains a lone surrogate (an unpaired \\uD800–\\uDFFF escape)`,
    );
}
