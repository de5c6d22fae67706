import { describe, expect, it } from "vitest";
import { describeError, thrownParts } from "../src/internal.js";

describe("describeError", () => {
  it("says what was thrown, whatever it is, without throwing", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwingMessage = new Error("hidden");
    Object.defineProperty(throwingMessage, "message", {
      get() {
        throw new Error("no");
      },
    });
    const cases: [unknown, string | RegExp][] = [
      [new TypeError("bad input"), "bad input"],
      ["plain text", "plain text"],
      [42, "42"],
      [undefined, "undefined"],
      [Symbol("thrown"), "Symbol(thrown)"],
      [{ code: 42 }, '{"code":42}'],
      [Object.create(null), "{}"],
      [
        {
          toString() {
            throw new Error("no");
          },
        },
        "{}",
      ],
      [throwingMessage, /^(\{\}|Error)/],
      [revoked.proxy, /cannot be described/],
    ];
    for (const [value, described] of cases) expect(describeError(value)).toMatch(described);
  });

  it("keeps an Error's name and stack", () => {
    expect(thrownParts(new RangeError("x"))).toMatchObject({ name: "RangeError", message: "x" });
    expect(thrownParts(new RangeError("x")).stack).toMatch(/^RangeError: x\n/);
    expect(thrownParts("x")).toEqual({ name: undefined, message: "x", stack: undefined });
  });
});
