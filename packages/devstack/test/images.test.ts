import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LOCALSTACK_IMAGE, POSTGRES_IMAGE } from "../src/backends/images.js";
import { localstackEnvironment } from "../src/backends/localstack-environment.js";

const compose = readFileSync(new URL("../../../docker-compose.yml", import.meta.url), "utf8");

/** A service's block in docker-compose.yml: its indented lines (devstack has no YAML parser). */
function composeService(name: string): string {
  const block = compose.match(new RegExp(`^ {2}${name}:\\n((?:(?: {4}.*)?\\n)*)`, "m"))?.[1];
  if (block === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return block;
}
const imageOf = (service: string) => composeService(service).match(/^ {4}image: (\S+)$/m)?.[1];

describe("container images", () => {
  it("are exact tags, the same in docker-compose.yml and the containers backend", () => {
    expect(LOCALSTACK_IMAGE).toMatch(/^localstack\/localstack:\d+\.\d+\.\d+$/);
    expect(POSTGRES_IMAGE).toMatch(/^postgres:\d+\.\d+(-alpine)?$/);
    expect(imageOf("localstack")).toBe(LOCALSTACK_IMAGE);
    expect(imageOf("postgres")).toBe(POSTGRES_IMAGE);
  });

  it("pin the last LocalStack that starts without an auth token", () => {
    expect(LOCALSTACK_IMAGE).toBe("localstack/localstack:4.14.0");
  });
});

describe("LOCALSTACK_AUTH_TOKEN", () => {
  it("reaches the backend's LocalStack container when set, and only then", () => {
    expect(localstackEnvironment({ LOCALSTACK_AUTH_TOKEN: "ls-token" })).toEqual({
      SERVICES: "sns,sqs,s3",
      LOCALSTACK_AUTH_TOKEN: "ls-token",
    });
    expect(localstackEnvironment({})).toEqual({ SERVICES: "sns,sqs,s3" });
    expect(localstackEnvironment({ LOCALSTACK_AUTH_TOKEN: "" })).toEqual({ SERVICES: "sns,sqs,s3" });
  });

  it("is passed through from the shell by docker-compose.yml (no value: left out when unset)", () => {
    expect(composeService("localstack")).toMatch(/^ {6}LOCALSTACK_AUTH_TOKEN:[ \t]*$/m);
  });
});
