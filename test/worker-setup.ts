// Every test worker, whatever its file imports, ends when its runner has gone (SIGKILL, a crash):
// devstack's exit clean-up does that on the IPC channel's `disconnect`, and cleans up first.
import "@outbox/devstack/exit-cleanup";
