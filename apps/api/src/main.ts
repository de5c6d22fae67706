import { runProgram } from "@outbox/shared/command-line";
import { apiProgram } from "./commands.js";

process.exitCode = await runProgram(apiProgram);
