import { describe, expect, it } from "vitest";
import { capturedLogger } from "./fixtures/captured-logger.js";

describe("logger", () => {
  it("puts service and version on every line and uses label levels", () => {
    const { lines, log } = capturedLogger();
    log.info({ unsent: 50 }, "drained");
    expect(lines[0]).toMatchObject({
      service: "relay",
      version: "1.2.3",
      level: "info",
      unsent: 50,
      msg: "drained",
    });
  });

  it("redacts passwords in database URLs, AWS keys and auth headers", () => {
    const { lines, log } = capturedLogger();
    log.info(
      {
        config: { databaseUrl: "postgres://app:hunter2@db:5432/app", awsRegion: "eu-west-1" },
        credentials: { accessKeyId: "AKIAABCDEFGHIJKLMNOP", secretAccessKey: "wJalrXUtnFEMI/K7MDENG" },
        headers: { authorization: "AWS4-HMAC-SHA256 Credential=AKIAABCDEFGHIJKLMNOP/..." },
        target: "connecting to postgres://app:hunter2@db:5432/app",
      },
      "start with postgres://u:topsecret@h/db",
    );
    const text = JSON.stringify(lines[0]);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("topsecret");
    expect(text).not.toContain("wJalrXUtnFEMI");
    expect(text).not.toContain("AKIAABCDEFGHIJKLMNOP");
    expect(text).not.toContain("AWS4-HMAC-SHA256");
    expect(lines[0]).toMatchObject({
      config: { databaseUrl: "[REDACTED]", awsRegion: "eu-west-1" },
      target: "connecting to postgres://app:[REDACTED]@db:5432/app",
      msg: "start with postgres://u:[REDACTED]@h/db",
    });
  });
});
