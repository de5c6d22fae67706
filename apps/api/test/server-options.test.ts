import { createLogger } from "@outbox/shared";
import { describe, expect, it } from "vitest";
import { createPhotoServer, type PhotoServerOptions, PhotoServerOptionsError } from "../src/index.js";
import { photoServerTimeouts } from "../src/server-options.js";

// Refused before anything uses them: the server's collaborators play no part in the checks.
const collaborators = {
  pool: {} as PhotoServerOptions["pool"],
  postPhoto: async () => ({ id: "", gearLink: "linked" as const }),
  metrics: {} as PhotoServerOptions["metrics"],
  log: createLogger({ service: "api-test", version: "0", level: "silent" }),
};

describe("createPhotoServer's options", () => {
  it("default to the settings' defaults", () => {
    expect(photoServerTimeouts(collaborators)).toEqual({
      headersTimeoutMs: 5_000,
      handlerTimeoutMs: 25_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 65_000,
    });
  });

  it("are refused by their settings' ranges, every option at fault named", () => {
    const refuse = () =>
      createPhotoServer({ ...collaborators, headersTimeoutMs: 50, keepAliveTimeoutMs: 10 });
    expect(refuse).toThrow(PhotoServerOptionsError);
    expect(refuse).toThrow(
      "createPhotoServer refuses its options: headersTimeoutMs: must be between 100 and 120000 ms (got 50); " +
        "keepAliveTimeoutMs: must be between 1000 and 600000 ms (got 10)",
    );
  });

  it("are refused by the daemon's rules, every option at fault named", () => {
    const refuse = () =>
      createPhotoServer({ ...collaborators, headersTimeoutMs: 40_000, handlerTimeoutMs: 30_000 });
    expect(refuse).toThrow(PhotoServerOptionsError);
    expect(refuse).toThrow(
      "createPhotoServer refuses its options: headersTimeoutMs: 40000 ms must be less than requestTimeoutMs (30000 ms): the headers are part of the request and must arrive well within its limit; " +
        "handlerTimeoutMs: 30000 ms must be less than requestTimeoutMs (30000 ms): a handler must give up and answer before the server cuts the connection without an answer",
    );
  });

  it("refuse a handler that outlasts the server's request limit", () => {
    expect(() => createPhotoServer({ ...collaborators, handlerTimeoutMs: 30_000 })).toThrow(
      /handlerTimeoutMs: .* must be less than requestTimeoutMs/,
    );
  });
});
