/// <reference lib="dom" />
// The playground page, bundled for the browser by serve.ts: the same simulator and planner as
// `pnpm simulate` and `pnpm plan`, run here on every change of the form.
import { DEMO } from "../demo.js";
import { gracePreset, preStopPreset } from "../presets.js";
import { explainRun } from "../race-explanation.js";
import {
  DEFAULT_SETUP,
  RACE_PLATFORMS,
  type RacePlatform,
  type RaceSetup,
  recommendFor,
  runSetup,
  SETUP_FIELDS,
  type SetupField,
  type SetupRun,
  setupProblem,
} from "../race-setup.js";
import { describeCounts, renderLog } from "../race-text.js";
import { describeSettings } from "../stop-settings.js";

const FIELDS = Object.keys(SETUP_FIELDS) as SetupField[];

function element<T extends HTMLElement>(selector: string): T {
  const found = document.querySelector<T>(selector);
  if (!found) throw new Error(`the page has no ${selector}`);
  return found;
}

const PLATFORMS = Object.keys(RACE_PLATFORMS) as RacePlatform[];

const form = element<HTMLFormElement>("#setup");
const inputOf = (field: SetupField) => element<HTMLInputElement>(`input[name=${field}]`);
const platformInput = (platform: RacePlatform) =>
  element<HTMLInputElement>(`input[name=platform][value=${platform}]`);

/** The choice of the order of the stop: a radio each, with the sentence that says what it does. */
function renderPlatformChoice(): void {
  element("#platforms").append(
    ...PLATFORMS.map((platform) => {
      const label = document.createElement("label");
      const radio = document.createElement("input");
      radio.type = "radio";
      radio.name = "platform";
      radio.value = platform;
      const name = document.createElement("strong");
      name.textContent = RACE_PLATFORMS[platform].name;
      label.append(radio, " ", name, `: ${RACE_PLATFORMS[platform].explanation}`);
      return label;
    }),
  );
}

function initialSetup(): RaceSetup {
  const text = document.getElementById("initial-setup")?.textContent ?? "";
  try {
    const parsed = JSON.parse(text) as RaceSetup;
    return setupProblem(parsed) === undefined ? parsed : DEFAULT_SETUP;
  } catch {
    return DEFAULT_SETUP;
  }
}

function readSetup(): RaceSetup {
  const value = (field: SetupField) => Number(inputOf(field).value);
  return {
    platform: PLATFORMS.find((platform) => platformInput(platform).checked) ?? DEFAULT_SETUP.platform,
    propagation: value("propagation"),
    work: value("work"),
    rate: value("rate"),
    replicas: value("replicas"),
    preStop: value("preStop"),
    grace: value("grace"),
  };
}

function writeSetup(setup: RaceSetup): void {
  platformInput(setup.platform).checked = true;
  for (const field of FIELDS) inputOf(field).value = String(setup[field]);
}

/** The labels follow the order: on ECS the two stop numbers are the delay and the stopTimeout. */
function labelFields(setup: RaceSetup): void {
  for (const field of FIELDS) {
    const labels = SETUP_FIELDS[field];
    const own = setup.platform === "k8s" ? undefined : labels[setup.platform];
    element(`[data-label=${field}]`).textContent = own ?? labels.label;
  }
}

/** The source document's selectors: preStop 0 / 2 / 4 and grace 1 / 10, labelled against the setup. */
function renderPresets(setup: RaceSetup): void {
  const presets = [
    ["preStop", DEMO.preStops, preStopPreset],
    ["grace", DEMO.graces, gracePreset],
  ] as const;
  for (const [field, values, label] of presets) {
    const box = element(`[data-presets=${field}]`);
    box.replaceChildren(
      ...values.map((value) => {
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.field = field;
        button.dataset.value = String(value);
        button.textContent = label(value, setup);
        button.setAttribute("aria-pressed", String(setup[field] === value));
        return button;
      }),
    );
  }
}

function cell(className: string, text = "", title = ""): HTMLElement {
  const span = document.createElement("span");
  span.className = `cell ${className}`;
  span.textContent = text;
  if (title) span.title = title;
  return span;
}

function nameCell(text: string): HTMLElement {
  const span = document.createElement("span");
  span.className = "name";
  span.textContent = text;
  return span;
}

/** One row per replica, one cell per tick coloured by its state, the ticks that lost requests in red. */
function renderTimeline(run: SetupRun): void {
  const timeline = element("#timeline");
  timeline.style.gridTemplateColumns = `max-content repeat(${run.frames.length}, 1.4rem)`;
  const rows: HTMLElement[] = [nameCell("t")];
  for (const frame of run.frames) {
    const tick = document.createElement("span");
    tick.className = "tick";
    tick.textContent = String(frame.at);
    rows.push(tick);
  }
  const names = run.frames[0]?.replicas.map((replica) => replica.replica) ?? [];
  names.forEach((name, index) => {
    rows.push(nameCell(name));
    for (const frame of run.frames) {
      const tick = frame.replicas[index];
      if (!tick) continue;
      const dropped = tick.refused + tick.cut;
      const title = `t=${frame.at} ${name}: ${tick.state}, ${tick.accepted} taken in, ${tick.served} served, ${dropped} dropped`;
      rows.push(
        cell(dropped > 0 ? `${tick.state} dropped` : tick.state, dropped > 0 ? String(dropped) : "", title),
      );
    }
  });
  if (run.frames.some((frame) => frame.unroutable > 0)) {
    rows.push(nameCell("no endpoint"));
    for (const frame of run.frames) {
      rows.push(
        frame.unroutable > 0
          ? cell("unroutable dropped", String(frame.unroutable), `t=${frame.at}: the target list is empty`)
          : cell("empty"),
      );
    }
  }
  timeline.replaceChildren(...rows);
}

function renderRun(run: SetupRun): void {
  element("#served").textContent = String(run.counts.served);
  element("#dropped").textContent = String(run.counts.dropped);
  element("#counts").textContent = describeCounts(run.counts);
  renderTimeline(run);
  element("#explanation").textContent = explainRun(run);
  element("#log").replaceChildren(
    ...renderLog(run.log).map((line) => {
      const item = document.createElement("li");
      item.textContent = line;
      return item;
    }),
  );
}

function update(): void {
  const setup = readSetup();
  labelFields(setup);
  for (const field of FIELDS) {
    const input = inputOf(field);
    input.min = String(SETUP_FIELDS[field].min);
    input.max = String(SETUP_FIELDS[field].max);
  }
  renderPresets(setup);
  const problem = setupProblem(setup);
  if (problem !== undefined) {
    element("#explanation").textContent = `not run: ${problem}`;
    return;
  }
  renderRun(runSetup(setup));
}

function recommend(): void {
  const setup = readSetup();
  if (setupProblem(setup) !== undefined) {
    update();
    return;
  }
  const { plan, setup: recommended } = recommendFor(setup);
  writeSetup(recommended);
  const problems = plan.problems.map((problem) => ` pnpm plan fails: ${problem}.`).join("");
  // The planner knows Kubernetes' grace; the document's model counts the same SIGKILL from SIGTERM.
  const inModel =
    setup.platform === "document"
      ? ` In the document's model: grace ${recommended.grace} after SIGTERM.`
      : "";
  element("#plan").textContent =
    `pnpm plan recommends ${describeSettings(plan.recommended)} (margin ${plan.marginMs / 1000} s).${inModel}${problems}`;
  update();
}

form.addEventListener("input", () => {
  element("#plan").textContent = "";
  update();
});
form.addEventListener("click", (event) => {
  const target = event.target;
  if (!(target instanceof HTMLButtonElement)) return;
  if (target.id === "recommend") {
    recommend();
    return;
  }
  const { field, value } = target.dataset;
  if (field === "preStop" || field === "grace") {
    inputOf(field).value = value ?? "";
    element("#plan").textContent = "";
    update();
  }
});

renderPlatformChoice();
writeSetup(initialSetup());
update();
