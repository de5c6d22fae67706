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

  it("masks secrets inside errors, their causes and custom fields, arrays and deep objects", () => {
    const { lines, log } = capturedLogger();
    const cause = new Error("connect to postgres://app:cause-pw@db:5432/app refused");
    const error = Object.assign(new Error("query on postgres://app:message-pw@db/app failed", { cause }), {
      code: "ECONNREFUSED",
      target: "postgres://app:custom-pw@db/app",
      attempts: [{ url: "postgres://app:array-pw@db/app" }],
    });
    const wrapped = new Error("outer", { cause: { detail: "postgres://app:plain-cause-pw@db/app" } });
    const cyclic: Record<string, unknown> = { url: "postgres://app:cycle-pw@db/app" };
    cyclic.self = cyclic;
    log.warn(
      {
        err: error,
        other: wrapped,
        list: ["postgres://app:list-pw@db/app", [new Error("postgres://app:nested-error-pw@db/app")]],
        deep: { a: { b: { c: { d: "postgres://app:deep-pw@db/app" } } } },
        cyclic,
      },
      "failed",
    );
    log.error(new Error("postgres://app:top-level-pw@db/app is down"));
    const text = lines.map((line) => JSON.stringify(line)).join("\n");
    for (const secret of [
      "cause-pw",
      "message-pw",
      "custom-pw",
      "array-pw",
      "plain-cause-pw",
      "cycle-pw",
      "list-pw",
      "nested-error-pw",
      "deep-pw",
      "top-level-pw",
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({
      err: {
        type: "Error",
        message:
          "query on postgres://app:[REDACTED]@db/app failed: connect to postgres://app:[REDACTED]@db:5432/app refused",
        code: "ECONNREFUSED",
        target: "postgres://app:[REDACTED]@db/app",
        attempts: [{ url: "postgres://app:[REDACTED]@db/app" }],
      },
      other: { type: "Error", message: "outer", cause: { detail: "postgres://app:[REDACTED]@db/app" } },
      deep: { a: { b: { c: { d: "postgres://app:[REDACTED]@db/app" } } } },
      cyclic: { url: "postgres://app:[REDACTED]@db/app", self: "[Circular]" },
      msg: "failed",
    });
    expect(String((lines[0]?.err as { stack?: string } | undefined)?.stack)).toMatch(
      /^Error: query on postgres:\/\/app:\[REDACTED\]@db\/app failed\n[\s\S]*\ncaused by: Error: connect to postgres:\/\/app:\[REDACTED\]@/,
    );
    expect(lines[1]).toMatchObject({
      msg: "postgres://app:[REDACTED]@db/app is down",
      err: { message: "postgres://app:[REDACTED]@db/app is down" },
    });
  });

  it("logs values that cannot be converted or read instead of throwing", () => {
    const { lines, log } = capturedLogger();
    const unreadable = new Error("boom");
    Object.defineProperty(unreadable, "detail", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const values = [
      Object.create(null),
      {
        toString: () => {
          throw new Error("no");
        },
      },
      Symbol("thrown"),
      unreadable,
      revoked.proxy,
    ];
    for (const err of values) expect(() => log.warn({ err }, "failed")).not.toThrow();
    expect(() => log.warn({ err: revoked.proxy })).not.toThrow();
    expect(lines).toHaveLength(values.length + 1);
    expect(lines[3]).toMatchObject({ err: { message: "boom", detail: "[unreadable]" } });
  });
});
