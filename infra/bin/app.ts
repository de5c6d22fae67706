import { fileURLToPath } from "node:url";
import { describeError } from "@outbox/client/internal";
import { EXIT_CONFIG } from "@outbox/shared";
import { App } from "aws-cdk-lib";
import { OutboxWorkersStack } from "../lib/outbox-workers-stack.js";
import { contextArguments, stackPropsFromContext } from "../lib/stack-context.js";

/**
 * `pnpm --filter @outbox/infra synth [-c key=value …]` (or `cdk synth` with infra/cdk.json) writes the
 * CloudFormation template to infra/cdk.out, offline: no lookups, no image build, no AWS credentials.
 * Images and the database secret are deploy-time parameters; context values cover the rest.
 *
 * Bad context is configuration, not a bug: one line naming the value and exit 78, no stack trace.
 */

try {
  const app = new App({
    outdir: process.env.CDK_OUTDIR ?? fileURLToPath(new URL("../cdk.out", import.meta.url)),
    context: contextArguments(process.argv.slice(2)),
  });
  const context = (key: string): string | undefined => {
    const value: unknown = app.node.tryGetContext(key);
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  new OutboxWorkersStack(app, context("stackName") ?? "OutboxWorkers", {
    description: "Outbox relay (Postgres → SNS) and inbox consumer (SQS → Postgres) on ECS Fargate",
    ...stackPropsFromContext(context),
  });
  // What the constructs refuse with Annotations (a consumer without handlers) fails the CDK CLI's
  // synth, not app.synth(): checked here too, so both ways of synthesizing refuse the same stacks.
  const refusals = app
    .synth()
    .stacks.flatMap((stack) => stack.messages)
    .filter((message) => message.level === "error");
  if (refusals.length > 0) {
    for (const refusal of refusals) process.stderr.write(`infra: ${String(refusal.entry.data)}\n`);
    process.exit(EXIT_CONFIG);
  }
} catch (error) {
  const message = describeError(error);
  process.stderr.write(`infra: ${message.split("\n").join(" ")}\n`);
  process.exit(EXIT_CONFIG);
}
