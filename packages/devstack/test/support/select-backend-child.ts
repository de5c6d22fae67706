// Runs the backend selection in a process of its own, because testcontainers keeps the first
// runtime it finds for the life of the process. Arguments: the requested backend and the discovery
// timeout in ms. Prints one JSON line: the backend chosen or the error, how long selection took, and
// for containers the engine socket testcontainers would mount into its reaper container.
const [requested, timeoutMs] = process.argv.slice(2);
if (requested !== "auto" && requested !== "embedded" && requested !== "containers") {
  throw new Error(`usage: select-backend-child.ts auto|embedded|containers TIMEOUT_MS, got ${requested}`);
}
// Loaded before the clock starts, so that `ms` measures discovery, not loading testcontainers.
const { getContainerRuntimeClient } = await import("testcontainers");
const { selectBackend } = await import("../../src/backends/select-backend.js");

const started = performance.now();
const elapsed = () => Math.round(performance.now() - started);
let result: object;
try {
  const backend = await selectBackend(requested, Number(timeoutMs));
  const ms = elapsed();
  // Kept by the discovery that just ran: asking again sends nothing to the engine.
  const runtime =
    backend === "containers" ? (await getContainerRuntimeClient()).info.containerRuntime : undefined;
  result = { backend, ms, remoteSocketPath: runtime?.remoteSocketPath };
} catch (error) {
  result = { error: error instanceof Error ? error.message : String(error), ms: elapsed() };
}
console.log(JSON.stringify(result));
// A discovery abandoned on its timeout may still hold a connection open; it has nothing left to say.
process.exit(0);
