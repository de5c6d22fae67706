import { invalidParameter } from "../errors.js";

const SETTABLE = new Set(["RawMessageDelivery", "RedrivePolicy", "DeliveryPolicy"]);

/**
 * Checks one subscription attribute. Filter policies are refused rather than stored: silently
 * delivering messages a policy should have filtered would make tests pass that fail on AWS.
 */
export function checkSubscriptionAttribute(name: string, value: string): void {
  if (name === "FilterPolicy" || name === "FilterPolicyScope") {
    throw invalidParameter(`${name} is not supported by the local SNS emulator`);
  }
  if (!SETTABLE.has(name)) throw invalidParameter("AttributeName");
  if (name === "RawMessageDelivery" && value !== "true" && value !== "false") {
    throw invalidParameter(
      `Attributes Reason: RawMessageDelivery: Invalid value [${value}]. Must be true or false.`,
    );
  }
  if (name === "RedrivePolicy" && value !== "") {
    let policy: unknown;
    try {
      policy = JSON.parse(value);
    } catch {
      throw invalidParameter("RedrivePolicy: Redrive policy is not a valid JSON");
    }
    if (typeof (policy as { deadLetterTargetArn?: unknown }).deadLetterTargetArn !== "string") {
      throw invalidParameter("RedrivePolicy: deadLetterTargetArn is missing");
    }
  }
}
