import { describe, expect, it } from "vitest";
import { runConsumer } from "../src/index.js";

// What runConsumer does with a valid set (the whole run, its stop and exit) is shown as a user
// runs it: test/packaging/consumer-package.test.ts.
describe("runConsumer", () => {
  it("refuses handlers that are no handler set at the call, before it takes over the process", () => {
    const namespace = { default: { types: [], find: () => undefined } };
    const listening = process.listenerCount("SIGTERM");
    expect(() => runConsumer({ handlers: namespace as never })).toThrow(
      new TypeError("runConsumer: `handlers` must be a handler set made with defineHandlers()"),
    );
    expect(process.listenerCount("SIGTERM")).toBe(listening);
  });
});
