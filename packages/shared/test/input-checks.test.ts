import { describe, expect, it } from "vitest";
import { hasControlCharacter, isTimestampWithZone, isUuid } from "../src/cli/input-checks.js";

describe("isTimestampWithZone", () => {
  it("takes a timestamp with its zone whose every field exists", () => {
    for (const text of [
      "2026-12-01T10:00:00Z",
      "2026-12-01 10:00+01",
      "2028-02-29T23:59:59.123456-05:30",
      "2026-12-01T10:00Z",
    ]) {
      expect({ text, ok: isTimestampWithZone(text) }).toEqual({ text, ok: true });
    }
  });

  it("refuses a day, an hour or a zone that does not exist, and a time without its zone", () => {
    for (const text of [
      "2026-02-30T10:00:00Z",
      "2026-02-29T10:00:00Z",
      "2026-13-01T10:00:00Z",
      "2026-04-31T10:00:00Z",
      "2026-12-01T24:00:00Z",
      "2026-12-01T10:60:00Z",
      "2026-12-01T10:00:00+16:00",
      "2026-12-01T10:00:00",
      "",
    ]) {
      expect({ text, ok: isTimestampWithZone(text) }).toEqual({ text, ok: false });
    }
  });
});

describe("isUuid", () => {
  it("takes 32 hex digits in the 8-4-4-4-12 form, and nothing else of 36 characters", () => {
    expect(isUuid("0192f4d2-7c3e-7b1a-9a55-3d2f1c0b9e8a")).toBe(true);
    expect(isUuid("0192F4D2-7C3E-7B1A-9A55-3D2F1C0B9E8A")).toBe(true);
    expect(isUuid("-".repeat(36))).toBe(false);
    expect(isUuid("0192f4d2-7c3e-7b1a-9a55-3d2f1c0b9e8g")).toBe(false);
  });
});

describe("hasControlCharacter", () => {
  it("finds NUL, the other C0 controls, DEL and C1; not ordinary text", () => {
    for (const text of ["a\u0000b", "\n", "\u007f", "\u009b"]) expect(hasControlCharacter(text)).toBe(true);
    expect(hasControlCharacter("order.placed — ünïcode")).toBe(false);
  });
});
