/*
 * Settings that let a drill recover from SIGKILLs in seconds instead of minutes: what a killed
 * process held comes back when its lease (relay) or visibility timeout (consumer) runs out, and the
 * production defaults (60 s and 30 s) would make a drill mostly waiting. Every timeout budget rule
 * still holds with these values.
 */
export const quickRelayLeases: Record<string, string> = {
  RELAY_LEASE_MS: "6000",
  RELAY_DRAIN_TIMEOUT_MS: "3000",
  DB_STATEMENT_TIMEOUT_MS: "1000",
  AWS_REQUEST_TIMEOUT_MS: "800",
};

export const quickConsumerVisibility: Record<string, string> = {
  CONSUMER_VISIBILITY_TIMEOUT_SECONDS: "5",
  CONSUMER_VISIBILITY_MARGIN_MS: "1000",
  AWS_REQUEST_TIMEOUT_MS: "2000",
};
