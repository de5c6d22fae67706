import { parseCommandLine, usageError } from "@outbox/shared/command-line";
import { DEMO, demoGrid, runDemoCell } from "../demo.js";
import { renderDemoGrid, renderLog } from "../race-text.js";

const usage = `usage: pnpm simulate

Runs the source document's termination-race demo on a logical clock and prints the whole grid:
propagation ${DEMO.propagation} ticks, work ${DEMO.work} ticks, ${DEMO.requestsPerTick} requests per tick, ${DEMO.replicas} replicas, pod-1 stopped
at t=${DEMO.stopAt}, preStop ${DEMO.preStops.join("/")} × grace ${DEMO.graces.join("/")}; then the event log of preStop 0 / grace 10.`;

const { positionals } = parseCommandLine(usage, {});
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

const headline = runDemoCell(0, 10);
process.stdout.write(
  [
    `termination race: propagation ${DEMO.propagation}, work ${DEMO.work}, ${DEMO.requestsPerTick} requests per tick, ${DEMO.replicas} replicas, ${DEMO.ticks} ticks`,
    "",
    renderDemoGrid(demoGrid()),
    "",
    `what happened with preStop 0, grace 10 (served ${headline.counts.served}, dropped ${headline.counts.dropped}):`,
    ...renderLog(headline.log).map((line) => `  ${line}`),
    "",
  ].join("\n"),
);
