import type { Attributes } from "@opentelemetry/api";
import { inClientSpan } from "./client-call-span.js";

/** Statement text beyond this is cut: an INSERT of many rows repeats its placeholders for pages. */
const QUERY_TEXT_LIMIT = 2_000;

const MAIN_STATEMENTS = new Set(["SELECT", "INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * BEGIN, SELECT, INSERT, …: the statement's first keyword; for a CTE (WITH …) the statement it
 * leads to, the first of those keywords outside every parenthesis.
 */
function operationName(text: string): string {
  const first =
    text
      .trimStart()
      .match(/^[A-Za-z]+/)?.[0]
      ?.toUpperCase() ?? "QUERY";
  if (first !== "WITH") return first;
  let depth = 0;
  for (const token of text.matchAll(/[()]|[A-Za-z]+/g)) {
    const word = token[0];
    if (word === "(") depth += 1;
    else if (word === ")") depth -= 1;
    else if (depth === 0 && MAIN_STATEMENTS.has(word.toUpperCase())) return word.toUpperCase();
  }
  return "WITH";
}

/**
 * A statement on a pooled connection, as a CLIENT span with OpenTelemetry's database attributes.
 * The text is the parameterised statement as sent: values travel apart and are never recorded.
 */
export function inQuerySpan<T>(
  text: string,
  database: string | undefined,
  run: () => Promise<T>,
): Promise<T> {
  return inClientSpan(() => {
    const operation = operationName(text);
    const attributes: Attributes = {
      "db.system.name": "postgresql",
      "db.operation.name": operation,
      "db.query.text": text.length > QUERY_TEXT_LIMIT ? `${text.slice(0, QUERY_TEXT_LIMIT)}…` : text,
      ...(database ? { "db.namespace": database } : {}),
    };
    return { name: database ? `${operation} ${database}` : operation, attributes };
  }, run);
}
