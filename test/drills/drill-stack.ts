import { type LocalStack, type StackInfo, stackInfo, startStack } from "@outbox/devstack";
import { stack } from "@outbox/test-kit";
import { afterAll, beforeAll } from "vitest";

/**
 * The stack a drill test runs on. The drills time their stops with the SNS emulator's fault
 * injection, which the containers backend (LocalStack) lacks; there they get an embedded stack of
 * their own, so they run on every backend rather than being skipped.
 */
export function useDrillStack(): () => StackInfo {
  let own: LocalStack | undefined;
  beforeAll(async () => {
    if (!stack().faultControlUrl) own = await startStack({ backend: "embedded" });
  });
  afterAll(async () => {
    await own?.stop();
  });
  return () => (own ? stackInfo(own) : stack());
}
