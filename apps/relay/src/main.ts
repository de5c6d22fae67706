import { runProgram } from "@outbox/shared/command-line";
import { relayProgram } from "./commands.js";

process.exitCode = await runProgram(relayProgram);
