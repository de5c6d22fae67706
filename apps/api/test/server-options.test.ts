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

  it("are refused by the daemon's rules, every option at fault named", () => {
    const refuse = () =>
      createPhotoServer({ ...collaborators, headersTimeoutMs: 40_000, keepAliveTimeoutMs: 10 });
    expect(refuse).toThrow(PhotoServerOptionsError);
    expect(refuse).toThrow(
      "createPhotoServer refuses its options: keepAliveTimeoutMs (API_KEEP_ALIVE_TIMEOUT_MS): must be between 1000 and 600000 ms, got 10; " +
        "headersTimeoutMs (API_HEADERS_TIMEOUT_MS): API_HEADERS_TIMEOUT_MS (40000 ms) = 40000 ms must be less than API_REQUEST_TIMEOUT_MS (30000 ms): the headers are part of the request and must arrive well within its limit",
    );
  });

  it("refuse a handler that outlasts the server's request limit", () => {
    expect(() => createPhotoServer({ ...collaborators, handlerTimeoutMs: 30_000 })).toThrow(
      /handlerTimeoutMs \(API_HANDLER_TIMEOUT_MS\): .* must be less than API_REQUEST_TIMEOUT_MS/,
    );
  });
});
