import type { OutboxTables as Database } from "@outbox/client";
import type { ConfigProblem } from "@outbox/shared";
import type { Kysely } from "kysely";

/**
 * This consumer's key in the inbox: the name given (CONSUMER_NAME, the `name` option), else the
 * queue's name, the last segment of its URL. Two services that consume one topic each have a queue
 * of their own, so their defaults differ and each processes every event; one service's replicas
 * share its queue, hence its name. A shared default (the former `consumer`) made such services split
 * the events between them, each counting the other's as duplicates.
 */
export function consumerNameOf(given: string | undefined, queueUrl: string): string {
  if (given !== undefined && given !== "") return given;
  const queueName = queueUrl
    .split("/")
    .filter((segment) => segment !== "")
    .at(-1);
  if (queueName === undefined || queueName.includes(":")) {
    throw new Error(`no queue name in the queue URL "${queueUrl}" to name the consumer by: give its name`);
  }
  return queueName;
}

/** What every consumer was named before the default was its queue's: the key of every inbox row written then. */
export const FORMER_DEFAULT_NAME = "consumer";

/**
 * The daemon's upgrade check: with CONSUMER_NAME unset (`given` empty) and the queue's name in use,
 * rows of the former default mean a deployment that ran before this default changed. Started under
 * its queue's name it would take every event redelivered from then on (in flight at the upgrade,
 * redriven, re-published) for new and apply it again: refused until the name is set either way.
 */
export async function formerDefaultProblems(
  db: Kysely<Database>,
  given: string,
  name: string,
): Promise<ConfigProblem[]> {
  if (given !== "" || name === FORMER_DEFAULT_NAME) return [];
  // The inbox's primary key starts with the consumer: one index probe, however large the inbox.
  const row = await db
    .selectFrom("inbox")
    .select("event_id")
    .where("consumer", "=", FORMER_DEFAULT_NAME)
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return [];
  return [
    {
      env: "CONSUMER_NAME",
      message: `is unset, and the inbox holds rows of the former default "${FORMER_DEFAULT_NAME}": set CONSUMER_NAME=${FORMER_DEFAULT_NAME} if they are this service's (its processed events stay processed), or CONSUMER_NAME=${name} (its queue's name) if another service wrote them`,
    },
  ];
}
