import fs from "node:fs";
import { apiSettings } from "@outbox/api";
import { consumerSettings } from "@outbox/consumer";
import { relaySettings } from "@outbox/relay";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { consumerBudget, relayBudget } from "../lib/budget.js";

const root = new URL("../../", import.meta.url);
const read = (path: string) => fs.readFileSync(new URL(path, root), "utf8");

interface ComposeService {
  image?: string;
  build?: { context: string; target: string };
  command?: string[];
  environment?: Record<string, string>;
  stop_grace_period?: string;
  stop_signal?: string;
  init?: boolean;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

const compose = parse(read("docker-compose.yml"), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const service = (name: string): ComposeService => {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
/** Read by the AWS SDK's credential chain, not by the daemons' settings. */
const sdkNames = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"];

describe("docker-compose.yml", () => {
  it("runs Postgres, LocalStack, a one-shot migration and both daemons", () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      "consumer",
      "localstack",
      "migrate",
      "postgres",
      "relay",
    ]);
    expect(service("relay").build).toEqual({ context: ".", target: "relay" });
    expect(service("consumer").build).toEqual({ context: ".", target: "consumer" });
    expect(service("migrate").command).toEqual([
      "node",
      "node_modules/@outbox/shared/dist/db/migrate-cli.js",
      "--demo",
    ]);
    for (const daemon of ["relay", "consumer"]) {
      expect(service(daemon).depends_on?.migrate).toEqual({ condition: "service_completed_successfully" });
      expect(service(daemon).depends_on?.localstack).toEqual({ condition: "service_healthy" });
    }
    expect(service("localstack").volumes).toEqual([
      "./infra/localstack/init-resources.sh:/etc/localstack/init/ready.d/init-resources.sh:ro",
    ]);
    expect(fs.statSync(new URL("infra/localstack/init-resources.sh", root)).mode & 0o111).not.toBe(0);
  });

  it("passes the daemons only the variables they read", () => {
    const names = {
      relay: new Set(Object.values(relaySettings).map((setting) => setting.env)),
      consumer: new Set(Object.values(consumerSettings).map((setting) => setting.env)),
      migrate: new Set(Object.values(relaySettings).map((setting) => setting.env)),
    };
    for (const [name, allowed] of Object.entries(names)) {
      for (const env of Object.keys(service(name).environment ?? {})) {
        if (!sdkNames.includes(env)) expect(allowed, `${name}: ${env}`).toContain(env);
      }
    }
  });

  it("uses the stack's stop budget: STOP_TIMEOUT_MS = stop_grace_period, under an init, on SIGTERM", () => {
    for (const [name, budget] of [
      ["relay", relayBudget()],
      ["consumer", consumerBudget({ maxTaskCount: 10 })],
    ] as const) {
      const daemon = service(name);
      expect(daemon.environment?.STOP_TIMEOUT_MS).toBe(String(budget.stopTimeoutMs));
      expect(daemon.stop_grace_period).toBe(`${budget.stopTimeoutSeconds}s`);
      expect(daemon.environment?.SHUTDOWN_OVERHEAD_MS).toBe(String(budget.shutdownOverheadMs));
      expect(daemon.stop_signal).toBe("SIGTERM");
      expect(daemon.init).toBe(true);
    }
    expect(service("relay").environment?.RELAY_DRAIN_TIMEOUT_MS).toBe(String(relayBudget().drainTimeoutMs));
  });

  it("creates the queue with the stack's numbers", () => {
    const budget = consumerBudget({ maxTaskCount: 10 });
    const consumer = service("consumer").environment ?? {};
    const localstack = service("localstack").environment ?? {};
    expect(consumer.CONSUMER_DRAIN_TIMEOUT_MS).toBe(String(budget.drainTimeoutMs));
    expect(consumer.CONSUMER_WAIT_TIME_SECONDS).toBe(String(budget.waitTimeSeconds));
    expect(consumer.CONSUMER_VISIBILITY_TIMEOUT_SECONDS).toBe(String(budget.visibilityTimeoutSeconds));
    expect(consumer.CONSUMER_QUEUE_RETENTION_HOURS).toBe(String(budget.queueRetentionSeconds / 3600));
    expect(localstack).toMatchObject({
      OUTBOX_VISIBILITY_TIMEOUT_SECONDS: String(budget.visibilityTimeoutSeconds),
      OUTBOX_WAIT_TIME_SECONDS: String(budget.waitTimeSeconds),
      OUTBOX_QUEUE_RETENTION_SECONDS: String(budget.queueRetentionSeconds),
      OUTBOX_DLQ_RETENTION_SECONDS: String(budget.dlqRetentionSeconds),
      OUTBOX_MAX_RECEIVE_COUNT: String(budget.maxReceiveCount),
    });
    const name = localstack.OUTBOX_RESOURCE_NAME;
    expect(consumer.CONSUMER_QUEUE_URL).toMatch(new RegExp(`/${name}$`));
    expect(consumer.CONSUMER_DLQ_URL).toMatch(new RegExp(`/${name}-dlq$`));
    expect(service("relay").environment?.RELAY_TOPIC_ARNS).toMatch(
      new RegExp(`=arn:aws:sns:us-east-1:000000000000:${name}$`),
    );
    const script = read("infra/localstack/init-resources.sh");
    expect(script).toContain("RawMessageDelivery=true");
    expect(consumer.CONSUMER_DELIVERY).toBe("raw");
    expect(script).toContain("maxReceiveCount");
    // The claim check: the bucket the consumer reads is the one the script makes, with LocalStack's S3.
    expect(consumer.CONSUMER_CLAIM_CHECK_BUCKET).toBe(`${name}-claim-check`);
    // The script's own shell variable, written as it is in the script.
    expect(script).toContain(`create-bucket --bucket "\${name}-claim-check"`);
    expect(service("localstack").environment?.SERVICES).toBe("sns,sqs,s3");
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map(([, image, name]) => ({
    image,
    name,
  }));

  it("builds with the pnpm that packageManager names and packages the daemons with the tested script", () => {
    expect(stages.map((stage) => stage.name)).toEqual([
      "build",
      "runtime",
      "relay",
      "consumer",
      "api",
      "console",
    ]);
    expect(dockerfile).toContain(`npm install -g "$(node -p 'require("./package.json").packageManager')"`);
    expect(JSON.parse(read("package.json")).packageManager).toMatch(/^pnpm@\d+\.\d+\.\d+$/);
    // The very script infra/test/packaged-daemons.test.ts runs and checks.
    expect(dockerfile).toMatch(/^RUN infra\/scripts\/package-daemons\.sh \/out$/m);
    expect(fs.statSync(new URL("infra/scripts/package-daemons.sh", root)).mode & 0o111).not.toBe(0);
  });

  it("runs on a slim Node LTS pinned by tag and digest, as a non-root user, node as the process, stopped by SIGTERM", () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(22|24)-bookworm-slim@sha256:[0-9a-f]{64}$/m);
    for (const stage of ["build", "runtime"]) {
      expect(stages.find((found) => found.name === stage)?.image).toMatch(/^\$\{NODE_IMAGE\}$/);
    }
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^STOPSIGNAL SIGTERM$/m);
    expect(dockerfile).toMatch(/^ENV NODE_ENV=production/m);
    expect(dockerfile).toContain("NODE_OPTIONS=--enable-source-maps");
    const commands = [...dockerfile.matchAll(/^CMD (.+)$/gm)].map(([, command]) => JSON.parse(command ?? ""));
    expect(commands).toEqual([
      ["node", "dist/main.js"],
      ["node", "dist/main.js"],
      ["node", "dist/main.js"],
      ["node", "dist/main.js"],
    ]);
  });

  it("ships Amazon RDS's CA bundle, readable by the daemons, where DB_SSL_CA_FILE looks by default", () => {
    const runtime = dockerfile.slice(dockerfile.indexOf(" AS runtime\n"), dockerfile.indexOf(" AS relay\n"));
    const bundle = runtime.match(
      /^ADD --chmod=644 https:\/\/truststore\.pki\.rds\.amazonaws\.com\/global\/global-bundle\.pem (\S+)$/m,
    );
    expect(bundle?.[1]).toBe("/etc/ssl/certs/rds-global-bundle.pem");
    for (const settings of [relaySettings, consumerSettings, apiSettings])
      expect(settings.dbSslCaFile.default).toBe(bundle?.[1]);
  });

  it("the console's image binds every address, so it refuses to start without its credentials; its health is its own port", () => {
    const stage = dockerfile.slice(dockerfile.indexOf(" AS console\n"));
    expect(stage).toMatch(/^COPY --from=build \/out\/console \/app$/m);
    expect(stage).toMatch(/^ENV CONSOLE_HOST=0\.0\.0\.0 /m);
    expect(stage).toMatch(/^EXPOSE 4000$/m);
    expect(stage).toContain("process.env.CONSOLE_PORT||4000");
    expect(JSON.parse(read("apps/console/package.json")).bin).toEqual({ "outbox-console": "./dist/main.js" });
    expect(read("apps/console/src/main.ts").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  it("keeps the build context small", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const pattern of ["**/node_modules", "**/dist", "**/cdk.out", ".git"])
      expect(ignored).toContain(pattern);
  });
});
