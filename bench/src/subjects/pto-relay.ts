import { PublishCommand, type SNSClient } from "@aws-sdk/client-sns";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import type pg from "pg";
import {
  type GeneralMessageHandler,
  getDisabledLogger,
  initializePollingMessageListener,
  initializeReplicationMessageListener,
  type TransactionalMessage,
} from "pg-transactional-outbox";
import type { RelayJob } from "../jobs.js";
import { wallMs } from "../measure.js";
import { ptoController } from "../pto-controllers.js";
import { PTO_NEXT_FUNCTION, PTO_TABLE } from "../pto-fixtures.js";
import type { Counter, Subject } from "./measure-subject.js";

/**
 * pg-transactional-outbox, wired as its README's outbox example: a GeneralMessageHandler that
 * publishes each message, outbox-style settings (no max-attempts / poisonous protection).
 */
export function ptoRelay(
  job: RelayJob,
  sns: SNSClient,
  counter: Counter,
  times: Map<string, number>,
): Subject {
  const handler: GeneralMessageHandler = {
    handle: async (message: TransactionalMessage) => {
      if (job.sink === "sns") {
        await sns.send(
          new PublishCommand({
            TopicArn: job.topicArn,
            Message: JSON.stringify(message.payload),
            MessageAttributes: {
              [EVENT_ID_ATTRIBUTE]: { DataType: "String", StringValue: message.id },
              [EVENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: message.messageType },
            },
          }),
        );
      }
      if (job.recordTimes) times.set(message.id, wallMs());
      counter.addId(message.id);
    },
  };
  const dbConfig: pg.PoolConfig = { connectionString: job.url, max: job.poolMax };
  const baseSettings = {
    dbSchema: "public",
    dbTable: PTO_TABLE,
    enableMaxAttemptsProtection: false,
    enablePoisonousMessageProtection: false,
    messageCleanupIntervalInMs: 0,
  };
  const logger = getDisabledLogger();
  let shutdown: (() => Promise<void>) | undefined;
  return {
    start() {
      if (job.impl === "pto-polling") {
        [shutdown] = initializePollingMessageListener(
          {
            outboxOrInbox: "outbox",
            dbListenerConfig: { connectionString: job.url },
            dbHandlerConfig: dbConfig,
            settings: {
              ...baseSettings,
              nextMessagesBatchSize: job.batchSize,
              nextMessagesFunctionName: PTO_NEXT_FUNCTION,
              nextMessagesPollingIntervalInMs: job.pollIntervalMs,
            },
          },
          handler,
          logger,
        );
      } else {
        if (!job.pto) throw new Error("pto-replication needs the publication and slot names");
        [shutdown] = initializeReplicationMessageListener(
          {
            outboxOrInbox: "outbox",
            dbListenerConfig: { connectionString: job.url },
            dbHandlerConfig: dbConfig,
            settings: {
              ...baseSettings,
              dbPublication: job.pto.publication,
              dbReplicationSlot: job.pto.slot,
            },
          },
          handler,
          logger,
          // The job's controller; without one, the library's default (the mutex: one message at a time).
          { concurrencyStrategy: ptoController(job.ptoController ?? "mutex", job.poolMax) },
        );
      }
    },
    async stop() {
      await shutdown?.();
    },
  };
}
