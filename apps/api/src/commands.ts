import { runApiDaemon } from "./daemon.js";
import { runReconcileOnce } from "./reconcile-once.js";

const USAGE = `usage: api [run]        serve the photo service until SIGTERM
       api reconcile  one pass of the gear link reconciliation job (a scheduled task), then exit
`;

const [command = "run"] = process.argv.slice(2);
switch (command) {
  case "run":
    await runApiDaemon();
    break;
  case "reconcile":
    process.exitCode = await runReconcileOnce();
    break;
  default:
    process.stderr.write(USAGE);
    process.exitCode = 64;
}
