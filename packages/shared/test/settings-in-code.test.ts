import { describe, expect, it } from "vitest";
import { environmentWith } from "../src/config/settings-in-code.js";
import { commonSettings, readConfig } from "../src/index.js";

describe("settings given in code (runConsumer's and runRelay's `settings`)", () => {
  it("win over the environment, numbers and booleans written as their text", () => {
    const { env, problems } = environmentWith(
      commonSettings,
      { LOG_LEVEL: "warn", DB_POOL_MAX: 12 },
      { LOG_LEVEL: "debug", DATABASE_URL: "postgres://app@127.0.0.1/app" },
    );
    expect(problems).toEqual([]);
    const { config } = readConfig(commonSettings, env);
    expect(config).toMatchObject({
      logLevel: "warn",
      dbPoolMax: 12,
      databaseUrl: "postgres://app@127.0.0.1/app",
    });
  });

  it("name a key that is no setting of the program, which the environment would have ignored", () => {
    const { problems } = environmentWith(commonSettings, { LOG_LEVL: "warn" }, {});
    expect(problems).toEqual([
      { env: "LOG_LEVL", message: "is not a setting of this program (given in code)" },
    ]);
  });

  it("are parsed as the environment is: a bad value is the variable's problem", () => {
    const { env } = environmentWith(commonSettings, { DB_POOL_MAX: 0 }, {});
    expect(readConfig(commonSettings, env).problems).toContainEqual(
      expect.objectContaining({ env: "DB_POOL_MAX" }),
    );
  });
});
