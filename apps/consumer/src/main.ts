import { runProgram } from "@outbox/shared/command-line";
import { consumerProgram } from "./commands.js";

process.exitCode = await runProgram(consumerProgram);
