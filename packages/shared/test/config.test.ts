import { describe, expect, it } from "vitest";
import { formerNamesIn, readConfig } from "../src/config/load-config.js";
import { describeTimeouts } from "../src/config/timeout-budget.js";
import {
  brokenRules,
  budgetRules,
  ConfigError,
  type ConfigOf,
  commonSettings,
  type DaemonTimeouts,
  databaseSettings,
  findBudgetProblems,
  loadConfig,
  notAbove,
  renderConfigTable,
  resolveConfig,
  resolveDaemonConfig,
  setting,
  type TimeoutRule,
} from "../src/index.js";

const spec = {
  ...commonSettings,
  batchSize: setting.integer({
    env: "BATCH_SIZE",
    min: 1,
    max: 1000,
    default: 100,
    description: "Rows per claim.",
  }),
  topics: setting.map({ env: "TOPICS", default: {}, description: "Logical topic → ARN." }),
  verbose: setting.boolean({ env: "VERBOSE", default: false, description: "More logs." }),
  queues: setting.list({ env: "QUEUES", default: [], description: "Queue names." }),
};

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError)
      return error.problems.map((problem) => `${problem.env}: ${problem.message}`);
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("applies defaults and parses typed values", () => {
    const config = loadConfig(spec, {
      DATABASE_URL: "postgres://app:secret@db:5432/app",
      BATCH_SIZE: "500",
      TOPICS: "orders=arn:aws:sns:us-east-1:1:orders, payments=arn:aws:sns:us-east-1:1:payments",
      VERBOSE: "true",
      QUEUES: " a, ,b ,",
    });
    expect(config.queues).toEqual(["a", "b"]);
    expect(config.batchSize).toBe(500);
    expect(config.stopTimeoutMs).toBe(30_000);
    expect(config.dbPoolMax).toBe(25);
    expect(config.dbPoolMaxLifetimeSeconds).toBe(300);
    expect(config.topics).toEqual({
      orders: "arn:aws:sns:us-east-1:1:orders",
      payments: "arn:aws:sns:us-east-1:1:payments",
    });
    expect(config.verbose).toBe(true);
  });

  it("lists every bad variable at once, with the reason, and never echoes a secret", () => {
    const problems = problemsOf(() =>
      loadConfig(spec, {
        DATABASE_URL: "not a url with password hunter2",
        BATCH_SIZE: "0",
        TOPICS: "orders",
        VERBOSE: "maybe",
        LOG_LEVEL: "loud",
        STOP_TIMEOUT_MS: "30s",
      }),
    );
    expect(problems).toHaveLength(6);
    expect(problems).toContain('BATCH_SIZE: must be between 1 and 1000 (got "0")');
    expect(problems).toContain('STOP_TIMEOUT_MS: expected a whole number (got "30s")');
    expect(problems.find((line) => line.startsWith("TOPICS:"))).toMatch(/expected key=value/);
    expect(problems.find((line) => line.startsWith("LOG_LEVEL:"))).toMatch(/expected one of fatal, error/);
    expect(problems.find((line) => line.startsWith("DATABASE_URL:"))).toMatch(/expected a URL/);
    expect(problems.join("\n")).not.toContain("hunter2");
  });

  it("says which entry of a key=value list is wrong, the value quoted once", () => {
    const base = { DATABASE_URL: "postgres://app@db:5432/app" };
    expect(problemsOf(() => loadConfig(spec, { ...base, TOPICS: "orders" }))).toEqual([
      'TOPICS: expected key=value (got "orders")',
    ]);
    expect(problemsOf(() => loadConfig(spec, { ...base, TOPICS: "orders=arn:1, payments" }))).toEqual([
      'TOPICS: expected key=value in every entry; entry 2 is not (got "orders=arn:1, payments")',
    ]);
  });

  it("takes OPS_HOST only as an IP literal: a host name would bind to whatever it resolves to at start-up", () => {
    const base = { DATABASE_URL: "postgres://app@db:5432/app" };
    expect(loadConfig(spec, { ...base, OPS_HOST: "127.0.0.1" }).opsHost).toBe("127.0.0.1");
    expect(loadConfig(spec, { ...base, OPS_HOST: "::" }).opsHost).toBe("::");
    expect(problemsOf(() => loadConfig(spec, { ...base, OPS_HOST: "ops.internal" }))).toEqual([
      'OPS_HOST: expected an IP address such as 0.0.0.0, 127.0.0.1 or :: (got "ops.internal")',
    ]);
  });

  it("takes DATABASE_URL as a URL or as an RDS-managed secret's JSON, whose fields make the URL", () => {
    const secret = {
      username: "app",
      password: "p@ss:w/rd",
      host: "db.internal",
      port: 6432,
      dbname: "orders",
    };
    expect(loadConfig(spec, { DATABASE_URL: JSON.stringify(secret) }).databaseUrl).toBe(
      "postgres://app:p%40ss%3Aw%2Frd@db.internal:6432/orders",
    );
    // RDS's own master secret has no dbname, and a hand-written one may give the port as text.
    const rds = { engine: "postgres", username: "app", password: "pw", host: "::1", port: "5432" };
    expect(loadConfig(spec, { DATABASE_URL: JSON.stringify(rds) }).databaseUrl).toBe(
      "postgres://app:pw@[::1]:5432/postgres",
    );
    const problems = [
      ...problemsOf(() => loadConfig(spec, { DATABASE_URL: '{"username":"app","password":"hunter2"}' })),
      ...problemsOf(() => loadConfig(spec, { DATABASE_URL: '{"password":"hunter2",' })),
    ];
    expect(problems).toEqual([
      "DATABASE_URL: an RDS-managed master-user secret (username and password only) holds no host: DATABASE_URL needs the URL, or an RDS secret's JSON with host (docs/deployment.md, the secret); the master-user secret can still rotate the password as DATABASE_SECRET_ARN",
      "DATABASE_URL: not valid JSON (an RDS secret's JSON needs username, password and host (port and dbname are optional))",
    ]);
    expect(problems.join("\n")).not.toContain("hunter2");
  });

  it("reads a renamed variable by its former name when only that one is set, and says so", () => {
    const renamed = {
      ...spec,
      batchSize: setting.integer({
        env: "RELAY_BATCH_SIZE",
        formerEnv: "BATCH_SIZE",
        min: 1,
        max: 1000,
        default: 100,
        description: "Rows per claim.",
      }),
    };
    const base = { DATABASE_URL: "postgres://app@db:5432/app" };
    expect(loadConfig(renamed, { ...base, BATCH_SIZE: "7" }).batchSize).toBe(7);
    expect(formerNamesIn(renamed, { ...base, BATCH_SIZE: "7" })).toEqual([
      { former: "BATCH_SIZE", current: "RELAY_BATCH_SIZE" },
    ]);
    // The current name wins, and then the former one is not worth a warning.
    expect(loadConfig(renamed, { ...base, BATCH_SIZE: "7", RELAY_BATCH_SIZE: "9" }).batchSize).toBe(9);
    expect(formerNamesIn(renamed, { ...base, BATCH_SIZE: "7", RELAY_BATCH_SIZE: "9" })).toEqual([]);
    // A bad value is reported under the name the operator wrote.
    expect(problemsOf(() => loadConfig(renamed, { ...base, BATCH_SIZE: "0" }))).toEqual([
      'BATCH_SIZE: must be between 1 and 1000 (got "0")',
    ]);
  });

  it("reports a missing required variable", () => {
    expect(problemsOf(() => loadConfig(spec, {}))).toEqual(["DATABASE_URL: is required"]);
  });
});

describe("resolveDaemonConfig: every problem of every kind, in one ConfigError", () => {
  const daemonSpec = {
    ...commonSettings,
    concurrency: setting.integer({ env: "CONCURRENCY", min: 1, max: 500, default: 10, description: "x" }),
    drainTimeoutMs: setting.milliseconds({
      env: "DRAIN_MS",
      min: 100,
      max: 120_000,
      default: 20_000,
      description: "x",
    }),
    leaseMs: setting.milliseconds({
      env: "LEASE_MS",
      min: 1_000,
      max: 600_000,
      default: 60_000,
      description: "x",
    }),
  };
  type DaemonConfig = ConfigOf<typeof daemonSpec>;
  const timeouts: DaemonTimeouts<DaemonConfig> = (config) => {
    const drain = { env: "DRAIN_MS", ms: config.drainTimeoutMs };
    return {
      drain,
      rules: [{ inner: [drain], outer: { env: "LEASE_MS", ms: config.leaseMs }, why: "lease" }],
      problems:
        config.concurrency >= config.dbPoolMax
          ? [
              {
                env: "CONCURRENCY",
                message: `${config.concurrency} must be less than DB_POOL_MAX (${config.dbPoolMax})`,
              },
            ]
          : [],
    };
  };
  const url = "postgres://nobody@127.0.0.1:1/none";
  const resolve = (env: Record<string, string>, checks = timeouts) =>
    problemsOf(() => resolveDaemonConfig(daemonSpec, checks, env));

  it("resolves a good environment with the common rules first", () => {
    const { config, drain, rules } = resolveDaemonConfig(daemonSpec, timeouts, { DATABASE_URL: url });
    expect(config.concurrency).toBe(10);
    expect(drain).toEqual({ env: "DRAIN_MS", ms: 20_000 });
    expect(rules.map((rule) => rule.outer.env)).toEqual(["STOP_TIMEOUT_MS", "DRAIN_MS", "LEASE_MS"]);
  });

  it("lists unparsable variables, the daemon's checks across settings and the broken budget rules together", () => {
    expect(
      resolve({
        DATABASE_URL: url,
        LOG_LEVEL: "loud",
        CONCURRENCY: "30",
        DRAIN_MS: "28000",
        LEASE_MS: "20000",
      }),
    ).toEqual([
      expect.stringMatching(/^LOG_LEVEL: expected one of/),
      "CONCURRENCY: 30 must be less than DB_POOL_MAX (25)",
      expect.stringMatching(
        /^DRAIN_MS: 28000 ms \+ SHUTDOWN_OVERHEAD_MS \(5000 ms\) = 33000 ms must be less than STOP_TIMEOUT_MS/,
      ),
      "DRAIN_MS: 28000 ms must be less than LEASE_MS (20000 ms): lease",
    ]);
  });

  it("leaves out a check on a variable that did not parse: it would judge a value nobody gave", () => {
    // DB_POOL_MAX would hold its default, 25, which CONCURRENCY=30 exceeds; STOP_TIMEOUT_MS, 30000.
    expect(resolve({ DATABASE_URL: url, DB_POOL_MAX: "many", CONCURRENCY: "30" })).toEqual([
      'DB_POOL_MAX: expected a whole number (got "many")',
    ]);
    expect(
      resolve({ DATABASE_URL: url, STOP_TIMEOUT_MS: "20s", DRAIN_MS: "28000", LEASE_MS: "90000" }),
    ).toEqual(['STOP_TIMEOUT_MS: expected a whole number (got "20s")']);
  });

  it("still reports the unparsable variables when a check fails without them, or throws the old way", () => {
    const crashes: DaemonTimeouts<DaemonConfig> = (config) => {
      if (config.databaseUrl === undefined) throw new TypeError("cannot read the URL");
      return timeouts(config);
    };
    expect(resolve({ CONCURRENCY: "0" }, crashes)).toEqual([
      "DATABASE_URL: is required",
      'CONCURRENCY: must be between 1 and 500 (got "0")',
    ]);
    const throwing: DaemonTimeouts<DaemonConfig> = () => {
      throw new ConfigError([{ env: "LEASE_MS", message: "too short" }]);
    };
    expect(resolve({ DATABASE_URL: url, DRAIN_MS: "x" }, throwing)).toEqual([
      'DRAIN_MS: expected a whole number (got "x")',
      "LEASE_MS: too short",
    ]);
  });

  it("refuses a pool connection lifetime that is not positive: pg reads 0 as never replacing one", () => {
    expect(
      problemsOf(() =>
        loadConfig(spec, { DATABASE_URL: "postgres://app@db:5432/app", DB_POOL_MAX_LIFETIME_SECONDS: "0" }),
      ),
    ).toEqual(['DB_POOL_MAX_LIFETIME_SECONDS: must be between 1 and 86400 (got "0")']);
  });

  it("reads on past a bad variable: its default stands in, the problem is listed", () => {
    const { config, problems } = readConfig(daemonSpec, { DB_POOL_MAX: "0" });
    expect(config.dbPoolMax).toBe(25);
    expect(config.databaseUrl).toBeUndefined();
    expect(problems.map((problem) => problem.env)).toEqual(["DATABASE_URL", "DB_POOL_MAX"]);
  });
});

describe("resolveConfig: the TLS settings are checked with everything else", () => {
  const url = "postgres://nobody@127.0.0.1:1/none";
  const missingCa =
    "DB_SSL_CA_FILE: cannot read /nonexistent/ca.pem (ENOENT), which DB_SSL_MODE=verify-full needs";
  const verifyFull = { DB_SSL_MODE: "verify-full", DB_SSL_CA_FILE: "/nonexistent/ca.pem" };
  const timeouts: DaemonTimeouts<ConfigOf<typeof commonSettings>> = () => ({
    drain: { env: "DRAIN_MS", ms: 20_000 },
    rules: [],
  });

  it("a daemon: parse problems, then TLS problems, then its checks and budget rules, in one ConfigError", () => {
    expect(
      problemsOf(() =>
        resolveDaemonConfig(commonSettings, timeouts, {
          DATABASE_URL: `${url}?sslmode=verify-full`,
          DB_SSL_CA_FILE: "/nonexistent/ca.pem",
          DB_POOL_MAX: "0",
          STOP_TIMEOUT_MS: "20000",
        }),
      ),
    ).toEqual([
      'DB_POOL_MAX: must be between 1 and 200 (got "0")',
      "DB_SSL_CA_FILE: cannot read /nonexistent/ca.pem (ENOENT), which sslmode=verify-full in DATABASE_URL needs",
      expect.stringMatching(/^DRAIN_MS: .* must be less than STOP_TIMEOUT_MS \(20000 ms\)/),
    ]);
  });

  it("a one-shot command: the same, with its own checks", () => {
    const checks = (config: ConfigOf<typeof databaseSettings>) =>
      brokenRules(
        [notAbove("statementMs", "limitMs")],
        { statementMs: config.dbStatementTimeoutMs, limitMs: 1_000 },
        (key) => (key === "statementMs" ? "DB_STATEMENT_TIMEOUT_MS" : "LIMIT_MS"),
      );
    expect(
      problemsOf(() =>
        resolveConfig(databaseSettings, checks, { DATABASE_URL: `${url}?sslkey=/k.pem`, ...verifyFull }),
      ),
    ).toEqual([
      "DATABASE_URL: the URL's sslkey parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)",
      missingCa,
      "DB_STATEMENT_TIMEOUT_MS: 5000 must not exceed LIMIT_MS (1000)",
    ]);
    expect(resolveConfig(databaseSettings, () => [], { DATABASE_URL: url })).toMatchObject({
      databaseUrl: url,
      dbSslMode: "auto",
    });
  });

  it("a DB_SSL_MODE that does not parse: only what holds whatever the mode is checked", () => {
    expect(
      problemsOf(() =>
        resolveConfig(databaseSettings, () => [], {
          DATABASE_URL: `${url}?sslmode=verify-full&sslcert=/c.pem`,
          DB_SSL_MODE: "verify-ca",
          DB_SSL_CA_FILE: "/nonexistent/ca.pem",
        }),
      ),
    ).toEqual([
      'DB_SSL_MODE: expected one of auto, disable, require, verify-full (got "verify-ca")',
      "DATABASE_URL: the URL's sslcert parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)",
    ]);
  });

  it("a DATABASE_URL that is missing or not a URL: the CA bundle is still checked", () => {
    expect(problemsOf(() => resolveConfig(databaseSettings, () => [], verifyFull))).toEqual([
      "DATABASE_URL: is required",
      missingCa,
    ]);
  });
});

describe("rules across settings", () => {
  const rules = [notAbove<{ baseMs: number; maxMs?: number }>("baseMs", "maxMs", "the cap wins")];
  const variables = (key: string) => (key === "baseMs" ? "BASE_MS" : "MAX_MS");

  it("name the setting to change, both values and the reason, as the reader names them", () => {
    expect(brokenRules(rules, { baseMs: 2_000, maxMs: 2_000 }, variables)).toEqual([]);
    expect(brokenRules(rules, { baseMs: 2_000, maxMs: 1_000 }, variables)).toEqual([
      { env: "BASE_MS", message: "2000 must not exceed MAX_MS (1000): the cap wins" },
    ]);
    expect(brokenRules(rules, { baseMs: 2_000, maxMs: 1_000 }, (key) => key)).toEqual([
      { env: "baseMs", message: "2000 must not exceed maxMs (1000): the cap wins" },
    ]);
  });

  it("leave out a rule that reads a value not given", () => {
    expect(brokenRules(rules, { baseMs: 2_000 }, variables)).toEqual([]);
  });

  it("of the timeout hierarchy become budget rules named by their reader, left out when a value is not given", () => {
    type Values = { holdMs: number; marginMs: number; leaseMs: number; drainMs?: number };
    const timeoutRules: TimeoutRule<Values>[] = [
      { inner: ["holdMs", "marginMs"], outer: "leaseMs", why: "lease" },
      { inner: ["holdMs"], outer: "drainMs", why: "drain" },
    ];
    const name = (key: string) => key.toUpperCase();
    expect(budgetRules(timeoutRules, { holdMs: 8_000, marginMs: 2_000, leaseMs: 10_000 }, name)).toEqual([
      {
        inner: [
          { env: "HOLDMS", ms: 8_000 },
          { env: "MARGINMS", ms: 2_000 },
        ],
        outer: { env: "LEASEMS", ms: 10_000 },
        why: "lease",
      },
    ]);
    expect(
      budgetRules(timeoutRules, { holdMs: 1, marginMs: 1, leaseMs: 10, drainMs: 5 }, name).map(
        (rule) => rule.why,
      ),
    ).toEqual(["lease", "drain"]);
  });
});

describe("timeout budget", () => {
  const stop = { env: "STOP_TIMEOUT_MS", ms: 30_000 };
  const overhead = { env: "SHUTDOWN_OVERHEAD_MS", ms: 5_000 };

  it("accepts a hierarchy where inner layers wait less", () => {
    const rules = [{ inner: [{ env: "DRAIN_MS", ms: 20_000 }, overhead], outer: stop, why: "x" }];
    expect(findBudgetProblems(rules)).toEqual([]);
    expect(describeTimeouts(rules)).toEqual({
      STOP_TIMEOUT_MS: 30_000,
      DRAIN_MS: 20_000,
      SHUTDOWN_OVERHEAD_MS: 5_000,
    });
  });

  it("rejects an inverted hierarchy and names the variables and sums", () => {
    const problems = findBudgetProblems([
      {
        inner: [{ env: "DRAIN_MS", ms: 25_000 }, overhead],
        outer: stop,
        why: "the drain must end before SIGKILL",
      },
      {
        inner: [{ env: "DB_STATEMENT_TIMEOUT_MS", ms: 25_000 }],
        outer: { env: "DRAIN_MS", ms: 25_000 },
        why: "y",
      },
    ]);
    expect(problems).toEqual([
      {
        env: "DRAIN_MS",
        message:
          "25000 ms + SHUTDOWN_OVERHEAD_MS (5000 ms) = 30000 ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before SIGKILL",
      },
      {
        env: "DB_STATEMENT_TIMEOUT_MS",
        message: "25000 ms must be less than DRAIN_MS (25000 ms): y",
      },
    ]);
  });
});

describe("renderConfigTable", () => {
  it("renders one row per setting with type, unit, default and description", () => {
    const table = renderConfigTable(spec).split("\n");
    expect(table[0]).toBe("| Variable | Type | Unit | Default | Description |");
    expect(table).toContain("| `BATCH_SIZE` | integer | — | `100` | Rows per claim. |");
    expect(table.find((row) => row.startsWith("| `DATABASE_URL`"))).toContain("*(required)*");
    expect(table.find((row) => row.startsWith("| `STOP_TIMEOUT_MS`"))).toContain(
      "| integer | ms | `30000` |",
    );
    expect(table).toHaveLength(Object.keys(spec).length + 2);
  });
});
