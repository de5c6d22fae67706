import { LocalstackContainer } from "@testcontainers/localstack";
import { PostgreSqlContainer } from "@testcontainers/postgresql";
import type { LocalStack, StartStackOptions } from "../local-stack.js";
import { CLAIM_CHECK_BUCKET, createClaimCheckBucket } from "../s3/claim-check-bucket.js";
import { LOCALSTACK_IMAGE, POSTGRES_IMAGE } from "./images.js";
import { localstackEnvironment } from "./localstack-environment.js";

/**
 * Stopping/starting the Postgres container is deliberately not offered: Docker may map a
 * restarted container to another host port, which would silently break `adminUrl` for every
 * client. Chaos drills that restart Postgres need the embedded backend (`STACK=embedded`).
 */
const notSupported = (): Promise<never> =>
  Promise.reject(
    new Error(
      "Postgres stop/start/restart is not supported on the containers backend (the host port could change); use STACK=embedded",
    ),
  );

/**
 * Postgres and LocalStack (SNS, SQS and S3) in containers. No fault injection here: LocalStack has no
 * hook for it and a proxy would have to rewrite PublishBatch responses, so `faults` is null and
 * fault suites skip themselves.
 */
export async function startContainersStack(options: StartStackOptions): Promise<LocalStack> {
  const settings = Object.entries(options.postgresSettings ?? {}).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
  const [postgres, localstack] = await Promise.all([
    new PostgreSqlContainer(POSTGRES_IMAGE)
      .withUsername("postgres")
      .withPassword("postgres")
      .withDatabase("postgres")
      .withCommand(["postgres", ...settings])
      .start(),
    new LocalstackContainer(LOCALSTACK_IMAGE).withEnvironment(localstackEnvironment()).start(),
  ]);
  const endpoint = localstack.getConnectionUri();
  const aws = {
    region: "us-east-1",
    snsEndpoint: endpoint,
    sqsEndpoint: endpoint,
    s3Endpoint: endpoint,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  };
  try {
    await createClaimCheckBucket(aws);
  } catch (error) {
    await Promise.all([postgres.stop(), localstack.stop()]);
    throw error;
  }
  return {
    backend: "containers",
    postgres: {
      adminUrl: postgres.getConnectionUri(),
      dataDir: null,
      running: true,
      stopServer: notSupported,
      startServer: notSupported,
      restart: notSupported,
    },
    aws,
    claimCheckBucket: CLAIM_CHECK_BUCKET,
    faultControlUrl: null,
    statsUrl: null,
    faults: null,
    stats: null,
    stop: async () => {
      await Promise.all([postgres.stop(), localstack.stop()]);
    },
  };
}
