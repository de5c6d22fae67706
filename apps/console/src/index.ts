// The operator console as a library: start it in a process of your own (the drills' `pnpm start
// --keep-running` does), or run `pnpm console`.
export { REFRESH_SECONDS, type RunningConsole, startConsole } from "./console.js";
export { type ConsoleConfig, consoleProblems, consoleSettings } from "./settings.js";
