/**
 * The drills `pnpm start` runs, in the source document's order: the HTTP stop rows, the daemons'
 * rows, then the timeout and deadline rows. Then what the peers lack: a payload past SNS's limit
 * through the S3 claim check, and a replay (a republished range reaches the consumer as
 * duplicates, no effect twice). Their rows (`rowsOf`) are the README's acceptance table.
 */
export const DEMO_DRILLS = [
  "http-sigterm",
  "relay-sigterm",
  "sigkill",
  "rolling-restart",
  "slow-dependency",
  "deadline",
  "claim-check",
  "replay",
] as const;
