import { isIP } from "node:net";
import { z } from "zod";
import { rdsSecretUrl } from "./rds-secret.js";

/**
 * One environment variable: its name, how to parse it, its unit, default and a one-line description.
 * The same object parses the environment and renders the documentation table, so the two cannot drift.
 */
export interface Setting<T> {
  readonly env: string;
  readonly type: string;
  readonly unit: string;
  readonly description: string;
  /** `undefined` means the variable is required. */
  readonly default: T | undefined;
  /** Secret values are never echoed in errors or logs. */
  readonly secret: boolean;
  readonly schema: z.ZodType<T, string>;
  /** How the default is shown in the docs (e.g. maps and secrets read better as prose). */
  readonly defaultLabel?: string;
  /** The variable's name before a rename, still read (with a warning) when `env` is not set. */
  readonly formerEnv?: string;
}

export type SettingsSpec = Record<string, Setting<unknown>>;
export type ConfigOf<S extends SettingsSpec> = {
  readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never;
};

interface Base<T> {
  env: string;
  formerEnv?: string;
  description: string;
  default?: T;
  secret?: boolean;
  defaultLabel?: string;
}

function make<T>(base: Base<T>, type: string, unit: string, schema: z.ZodType<T, string>): Setting<T> {
  return {
    env: base.env,
    type,
    unit,
    description: base.description,
    default: base.default,
    secret: base.secret ?? false,
    schema,
    ...(base.defaultLabel === undefined ? {} : { defaultLabel: base.defaultLabel }),
    ...(base.formerEnv === undefined ? {} : { formerEnv: base.formerEnv }),
  };
}

// What a bad URL is told, by the URL setting and by the database setting's URL form alike.
const URL_EXPECTED = "expected a URL such as postgres://user@host:5432/db";

const integerText = z
  .string()
  .regex(/^-?\d+$/, "expected a whole number")
  .transform(Number);

/** Builders for every kind of setting the daemons take. */
export const setting = {
  string(base: Base<string>): Setting<string> {
    return make(base, "string", "", z.string().min(1, "must not be empty"));
  },
  /** An IPv4 or IPv6 literal to bind to: a host name would be resolved at bind time, and could change. */
  ipAddress(base: Base<string>): Setting<string> {
    return make(
      base,
      "IP address",
      "",
      z
        .string()
        .refine((value) => isIP(value) !== 0, "expected an IP address such as 0.0.0.0, 127.0.0.1 or ::"),
    );
  },
  url(base: Base<string>): Setting<string> {
    return make(
      base,
      "url",
      "",
      z.string().refine((value) => URL.canParse(value), URL_EXPECTED),
    );
  },
  /**
   * A Postgres connection: a URL, or the JSON of an RDS-managed (or rotated) Secrets Manager secret,
   * `{ username, password, host, port, dbname }`, which ECS injects whole when no field is named.
   * The JSON becomes the URL it stands for, its user and password percent-encoded.
   */
  databaseUrl(base: Base<string>): Setting<string> {
    return make(
      base,
      "url or RDS secret JSON",
      "",
      z.string().transform((text, ctx) => {
        if (!text.trimStart().startsWith("{")) {
          if (URL.canParse(text)) return text;
          ctx.addIssue({ code: "custom", message: URL_EXPECTED });
          return z.NEVER;
        }
        const secret = rdsSecretUrl(text);
        if ("url" in secret) return secret.url;
        ctx.addIssue({ code: "custom", message: secret.problem });
        return z.NEVER;
      }),
    );
  },
  integer(base: Base<number> & { min: number; max: number; unit?: string }): Setting<number> {
    const range = `between ${base.min} and ${base.max}`;
    return make(
      base,
      "integer",
      base.unit ?? "",
      integerText.pipe(z.number().min(base.min, `must be ${range}`).max(base.max, `must be ${range}`)),
    );
  },
  /** A duration in milliseconds; the unit is part of the variable's name (`…_MS`). */
  milliseconds(base: Base<number> & { min?: number; max: number }): Setting<number> {
    const min = base.min ?? 0;
    const range = `between ${min} and ${base.max} ms`;
    return make(
      base,
      "integer",
      "ms",
      integerText.pipe(z.number().min(min, `must be ${range}`).max(base.max, `must be ${range}`)),
    );
  },
  boolean(base: Base<boolean>): Setting<boolean> {
    return make(
      base,
      "boolean",
      "",
      z
        .string()
        .refine((value) => ["true", "false", "1", "0"].includes(value), "expected true or false")
        .transform((value) => value === "true" || value === "1"),
    );
  },
  oneOf<const V extends readonly [string, ...string[]]>(
    base: Base<V[number]> & { values: V },
  ): Setting<V[number]> {
    return make(
      base,
      base.values.join(" \\| "),
      "",
      z.string().refine((value): value is V[number] => base.values.includes(value), {
        message: `expected one of ${base.values.join(", ")}`,
      }) as unknown as z.ZodType<V[number], string>,
    );
  },
  /** `a,b,c`, e.g. topic ARNs; blanks between commas are dropped. */
  list(base: Base<readonly string[]>): Setting<readonly string[]> {
    return make(
      base,
      "comma-separated list",
      "",
      z.string().transform((text) =>
        text
          .split(",")
          .map((part) => part.trim())
          .filter((part) => part !== ""),
      ),
    );
  },
  /** `key=value,key=value`, e.g. logical topic → topic ARN. */
  map(base: Base<Readonly<Record<string, string>>>): Setting<Readonly<Record<string, string>>> {
    return make(
      base,
      "key=value list",
      "",
      z.string().transform((text, ctx) => {
        const entries: Record<string, string> = {};
        const pairs = text
          .split(",")
          .map((part) => part.trim())
          .filter((part) => part !== "");
        for (const [index, pair] of pairs.entries()) {
          const at = pair.indexOf("=");
          if (at <= 0 || at === pair.length - 1) {
            // The value itself is quoted after the message (readConfig): only which entry is wrong goes here.
            const which = pairs.length === 1 ? "" : ` in every entry; entry ${index + 1} is not`;
            ctx.addIssue({ code: "custom", message: `expected key=value${which}` });
            return z.NEVER;
          }
          entries[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
        }
        return entries;
      }),
    );
  },
};
