import { describe, expect, it, vi } from "vitest";
import { Deadline, DeadlineExceededError, isPoisonMessageError, PoisonMessageError } from "../src/index.js";

/**
 * A second copy of the client in the same process, as a handlers module bundled with its own
 * @outbox/client brings: the same sources, loaded again, so every class is another class.
 */
async function anotherCopy(): Promise<typeof import("../src/index.js")> {
  vi.resetModules();
  return import("../src/index.js");
}

describe("what the consumer recognises from another copy of the client", () => {
  it("knows a PoisonMessageError by its brand, where instanceof cannot", async () => {
    const other = await anotherCopy();
    const theirs = new other.PoisonMessageError("refused");
    expect(theirs instanceof PoisonMessageError).toBe(false);
    expect(isPoisonMessageError(theirs)).toBe(true);
    expect(other.isPoisonMessageError(new PoisonMessageError("refused"))).toBe(true);
  });

  it("does not take an error for poison by its name or message", () => {
    const lookalike = Object.assign(new Error("PoisonMessageError"), { name: "PoisonMessageError" });
    for (const value of [lookalike, new Error("poison"), "PoisonMessageError", null, undefined, {}]) {
      expect(isPoisonMessageError(value)).toBe(false);
    }
  });

  it("links a deadline to a parent deadline of another copy", async () => {
    const other = await anotherCopy();
    const parent = other.Deadline.after(1);
    const child = Deadline.after(60_000, parent);
    const reason = await new Promise((resolve) => child.onAbort(resolve));
    expect(reason).toBeInstanceOf(other.DeadlineExceededError);
    expect(reason).not.toBeInstanceOf(DeadlineExceededError);
    child.dispose();
  });
});
