import { parseCommandLine, usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { EXIT_CRASH } from "@outbox/shared/exit-codes";
import { DEMO } from "../demo.js";
import { renderDemoGrid } from "../demo-grid-text.js";
import {
  DEFAULT_SETUP,
  RACE_PLATFORMS,
  type RacePlatform,
  type RaceSetup,
  runSetup,
  SETUP_FIELDS,
  type SetupField,
} from "../race-setup.js";
import { renderRun } from "../setup-text.js";

const DEFAULT_PORT = 4173;

const usage = `usage: pnpm simulate [--platform document|k8s|ecs] [--propagation N] [--work N] [--rate N] [--replicas N]
                     [document, k8s: --pre-stop N --grace N | ecs: --deregistration-delay N --stop-timeout N]
                     [--serve [--port N]]

The termination race on the source document's logical clock (N: whole ticks). With no option it
prints the document's demo grid (propagation ${DEMO.propagation}, work ${DEMO.work}, ${DEMO.requestsPerTick} requests per tick, ${DEMO.replicas} replicas, pod-1 stopped
at t=${DEMO.stopAt}, preStop ${DEMO.preStops.join("/")} × grace ${DEMO.graces.join("/")}) in the document's model and in Kubernetes', then the run
of preStop 0 / grace 10 tick by tick. With options it runs that setup instead: per replica and tick
its state and its drops, the counts, why, the log.

  --platform               k8s (default; the grace counts from the deletion and holds the preStop),
                           document (the source document's model: the grace counts from SIGTERM)
                           or ecs (behind an ALB: the deregistration delay holds SIGTERM back)
  --propagation N          ticks until the removal reaches every router (default ${DEFAULT_SETUP.propagation})
  --work N                 ticks one request runs (default ${DEFAULT_SETUP.work})
  --rate N                 requests per tick (default ${DEFAULT_SETUP.rate})
  --replicas N             replicas; pod-1 stops (default ${DEFAULT_SETUP.replicas}; 1 always drops)
  --pre-stop N, --grace N  document, k8s: the preStop wait and the grace (default ${DEFAULT_SETUP.preStop} and ${DEFAULT_SETUP.grace})
  --deregistration-delay N, --stop-timeout N
                           ecs: the target group's delay and the container's stopTimeout (default ${DEFAULT_SETUP.preStop} and ${DEFAULT_SETUP.grace})
  --serve                  serve the same race as a page to play with on http://127.0.0.1:PORT/
                           (the options above are its starting point); Ctrl-C stops it
  --port N                 the page's port (default ${DEFAULT_PORT}; 0 picks a free one)`;

const number = { type: "string" } as const;
const { values, positionals } = parseCommandLine(usage, {
  platform: number,
  propagation: number,
  work: number,
  rate: number,
  replicas: number,
  "pre-stop": number,
  grace: number,
  "deregistration-delay": number,
  "stop-timeout": number,
  serve: { type: "boolean" },
  port: number,
});
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

/** Each order's names for the two stop settings. */
const stopOptions: Readonly<Record<RacePlatform, { readonly preStop: string; readonly grace: string }>> = {
  document: { preStop: "pre-stop", grace: "grace" },
  k8s: { preStop: "pre-stop", grace: "grace" },
  ecs: { preStop: "deregistration-delay", grace: "stop-timeout" },
};
const platforms = Object.keys(stopOptions) as RacePlatform[];

function platformOf(value: unknown): RacePlatform {
  if (value === undefined) return DEFAULT_SETUP.platform;
  const known = platforms.find((platform) => platform === value);
  return known ?? usageError(usage, `--platform must be k8s, document or ecs, got ${JSON.stringify(value)}`);
}

function tickOption(option: string, field: SetupField): number {
  const { min, max } = SETUP_FIELDS[field];
  const value = wholeNumberOption(usage, option, values[option], DEFAULT_SETUP[field], min);
  if (value > max) usageError(usage, `--${option} must be at most ${max}, got "${value}"`);
  return value;
}

function setupOf(platform: RacePlatform): RaceSetup {
  const own = Object.values(stopOptions[platform]);
  const every = new Set(platforms.flatMap((other) => Object.values(stopOptions[other])));
  const misplaced = [...every].filter((name) => !own.includes(name) && values[name] !== undefined);
  if (misplaced.length > 0) {
    const owners = platforms.filter((other) =>
      Object.values(stopOptions[other]).includes(misplaced[0] ?? ""),
    );
    usageError(usage, `--${misplaced.join(", --")} applies to ${owners.join(" and ")} only, not ${platform}`);
  }
  return {
    platform,
    propagation: tickOption("propagation", "propagation"),
    work: tickOption("work", "work"),
    rate: tickOption("rate", "rate"),
    replicas: tickOption("replicas", "replicas"),
    preStop: tickOption(stopOptions[platform].preStop, "preStop"),
    grace: tickOption(stopOptions[platform].grace, "grace"),
  };
}

const setup = setupOf(platformOf(values.platform));

if (values.serve === true) {
  const port = wholeNumberOption(usage, "port", values.port, DEFAULT_PORT, 0);
  if (port > 65_535) usageError(usage, `--port must be at most 65535, got "${port}"`);
  // Loaded only here: esbuild and the server are no part of the terminal's run.
  const { servePlayground } = await import("../playground/serve.js");
  const playground = await servePlayground({ port, initial: setup }).catch((error: NodeJS.ErrnoException) => {
    const reason =
      error.code === "EADDRINUSE" ? `port ${port} is in use: pick another with --port` : error.message;
    process.stderr.write(`simulate --serve: ${reason}\n`);
    process.exit(EXIT_CRASH);
  });
  process.stdout.write(`termination race playground: ${playground.url} (Ctrl-C stops it)\n`);
  const stop = () => {
    process.stdout.write("stopping the playground\n");
    void playground.close();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
} else {
  if (values.port !== undefined) usageError(usage, "--port applies to --serve only");
  const headline = Object.keys(values).length === 0;
  const lines = headline
    ? [
        `termination race: propagation ${DEMO.propagation}, work ${DEMO.work}, ${DEMO.requestsPerTick} requests per tick, ${DEMO.replicas} replicas, ${DEMO.ticks} ticks`,
        "",
        `${RACE_PLATFORMS.document.name}: ${RACE_PLATFORMS.document.explanation}`,
        "",
        renderDemoGrid("document"),
        "",
        `${RACE_PLATFORMS.k8s.name}: ${RACE_PLATFORMS.k8s.explanation}`,
        "",
        renderDemoGrid("k8s"),
        "",
        `preStop 0, grace 10, tick by tick (any option runs another setup):`,
        "",
        ...renderRun(runSetup(DEFAULT_SETUP)),
      ]
    : renderRun(runSetup(setup));
  process.stdout.write(`${lines.join("\n")}\n`);
}
