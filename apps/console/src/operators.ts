/** What an operator of CONSOLE_USERS may do: everything, or look only (as CONSOLE_READ_ONLY, for them). */
export type Access = "read-write" | "read-only";

export interface Operator {
  readonly name: string;
  readonly access: Access;
  readonly password: string;
}

/** The shortest password accepted, as for CONSOLE_TOKEN: a guessable secret on a network is no protection. */
export const MIN_PASSWORD_LENGTH = 16;

/** A name that goes into log lines as it is: plain, short. */
const NAME = /^[\w.@-]{1,64}$/;

/**
 * CONSOLE_USERS: one operator per line, `name:access:password` (access `read-write` or
 * `read-only`; the password last, so it may hold colons). Blank lines and `#` comments are skipped.
 * The operators, and what is wrong, a problem per line (no value repeated: they are secrets).
 */
export function parseOperators(text: string): {
  readonly operators: readonly Operator[];
  readonly problems: readonly string[];
} {
  const operators: Operator[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const [name = "", access = "", ...rest] = line.split(":");
    const password = rest.join(":");
    const where = `line ${index + 1}`;
    if (!NAME.test(name)) problems.push(`${where}: the user name must be 1-64 of A-Z a-z 0-9 _ . @ -`);
    else if (access !== "read-write" && access !== "read-only")
      problems.push(`${where}: the access must be read-write or read-only (name:access:password)`);
    else if (password.length < MIN_PASSWORD_LENGTH)
      problems.push(`${where}: the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    else if (operators.some((operator) => operator.name === name))
      problems.push(`${where}: ${name} is listed twice`);
    else operators.push({ name, access, password });
  });
  return { operators, problems };
}
