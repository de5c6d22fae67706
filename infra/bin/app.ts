import { fileURLToPath } from "node:url";
import { App } from "aws-cdk-lib";
import { OutboxWorkersStack } from "../lib/outbox-workers-stack.js";

/**
 * `pnpm --filter @outbox/infra synth` (or `cdk synth` with infra/cdk.json) writes the CloudFormation
 * template to infra/cdk.out, offline: no lookups, no image build, no AWS credentials. Images and the
 * database secret are deploy-time parameters; context values (`-c key=value`) cover the rest.
 */
const app = new App({
  outdir: process.env.CDK_OUTDIR ?? fileURLToPath(new URL("../cdk.out", import.meta.url)),
});
const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === "string" && value !== "" ? value : undefined;
};
const email = context("alarmEmail");
const databaseSecurityGroupId = context("databaseSecurityGroupId");
const handlersModule = context("consumerHandlersModule");
// The photo service is deployed once it has an equipment service to talk to (`-c equipmentUrl=…`).
const equipmentUrl = context("equipmentUrl");
const databaseUrlSecretKeyArn = context("databaseUrlSecretKeyArn");
const natGateways = context("natGateways");

new OutboxWorkersStack(app, context("stackName") ?? "OutboxWorkers", {
  description: "Outbox relay (Postgres → SNS) and inbox consumer (SQS → Postgres) on ECS Fargate",
  fifo: context("fifo") === "true",
  ...(email ? { alarmEmail: email } : {}),
  ...(databaseSecurityGroupId ? { databaseSecurityGroupId } : {}),
  ...(handlersModule ? { consumer: { handlersModule } } : {}),
  ...(equipmentUrl ? { api: { equipmentUrl } } : {}),
  ...(databaseUrlSecretKeyArn ? { databaseUrlSecretKeyArn } : {}),
  ...(natGateways ? { natGateways: Number(natGateways) } : {}),
  // The first deployment: everything but running tasks, so the migration can run first.
  startServices: context("startServices") !== "false",
});
app.synth();
