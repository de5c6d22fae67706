import { stackInfo, startStack } from "@outbox/devstack";
import type { TestProject } from "vitest/node";

// One local stack per test run (backend chosen by env STACK, else Docker if it answers, else
// embedded); every test file creates its own database and topic/queue names on it, so files
// stay isolated while the servers start only once. Vitest calls the returned teardown even
// when tests fail.
export default async function setup(project: TestProject) {
  const stack = await startStack();
  project.provide("stack", stackInfo(stack));
  project.provide("postgresAdminUrl", stack.postgres.adminUrl);
  return async () => {
    await stack.stop();
  };
}
