import type { Backend } from "../local-stack.js";
import { discoverContainerRuntime } from "./runtime-discovery.js";

/**
 * `auto` is the containers backend whenever testcontainers can reach a container runtime, else the
 * embedded one; an explicit choice stands, and a forced `containers` without a runtime fails with
 * what was tried instead of falling back behind the user's back.
 */
export async function selectBackend(requested: "auto" | Backend, timeoutMs?: number): Promise<Backend> {
  if (requested === "embedded") return "embedded";
  const runtime = await discoverContainerRuntime(timeoutMs);
  if (runtime.found) return "containers";
  if (requested === "auto") return "embedded";
  throw new Error(`The containers backend needs a container runtime, but ${runtime.reason}`);
}
