interface RdsSecret {
  readonly username: string;
  readonly password: string;
  readonly host: string;
  readonly port: number;
  readonly dbname: string;
}

/** The secret's fields, or what is wrong with it (naming fields, never echoing a value). */
function rdsSecret(text: string): RdsSecret | string {
  const usage = "an RDS secret's JSON needs username, password and host (port and dbname are optional)";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `not valid JSON (${usage})`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return usage;
  const fields = value as Record<string, unknown>;
  // What RDS writes with --manage-master-user-password: the credentials only, never the endpoint.
  const present = (name: string) => typeof fields[name] === "string" && fields[name] !== "";
  if (present("username") && present("password") && fields.host === undefined) {
    return "an RDS-managed master-user secret (username and password only) holds no host: DATABASE_URL needs the URL, or an RDS secret's JSON with host (docs/deployment.md, the secret); the master-user secret can still rotate the password as DATABASE_SECRET_ARN";
  }
  const missing = ["username", "password", "host"].filter(
    (name) => typeof fields[name] !== "string" || fields[name] === "",
  );
  // RDS writes the port as a number; a hand-written secret often has it as a string.
  const port = Number(fields.port ?? 5432);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) missing.push("port");
  const dbname = fields.dbname ?? fields.database ?? "postgres";
  if (typeof dbname !== "string" || dbname === "") missing.push("dbname");
  if (missing.length > 0) return `${usage}; missing or invalid: ${missing.join(", ")}`;
  return {
    username: fields.username as string,
    password: fields.password as string,
    host: fields.host as string,
    port,
    dbname: dbname as string,
  };
}

/**
 * The Postgres URL an RDS-managed secret's JSON stands for, its user, password and database
 * percent-encoded (an IPv6 host in brackets), or what is wrong with the secret.
 */
export function rdsSecretUrl(text: string): { readonly url: string } | { readonly problem: string } {
  const secret = rdsSecret(text);
  if (typeof secret === "string") return { problem: secret };
  const user = encodeURIComponent(secret.username);
  const password = encodeURIComponent(secret.password);
  const host = secret.host.includes(":") ? `[${secret.host}]` : secret.host;
  return {
    url: `postgres://${user}:${password}@${host}:${secret.port}/${encodeURIComponent(secret.dbname)}`,
  };
}
