import { DEMO } from "./demo.js";
import { demoGrid } from "./demo-grid.js";
import { gracePreset, preStopPreset } from "./presets.js";
import { DEFAULT_SETUP, type RacePlatform } from "./race-setup.js";
import { describeCounts } from "./race-text.js";

/**
 * The demo's preStop × grace grid in one order of the stop, as a Markdown table, one row per
 * preStop. In Kubernetes' order what a grace means depends on the preStop, so its columns say only
 * where it counts from.
 */
export function renderDemoGrid(platform: RacePlatform): string {
  const setup = { ...DEFAULT_SETUP, platform };
  const cells = demoGrid(platform);
  const graceHeader = (grace: number) =>
    platform === "k8s" ? `${grace} (counted from the deletion)` : gracePreset(grace, setup);
  const header = `| preStop \\ grace | ${DEMO.graces.map(graceHeader).join(" | ")} |`;
  const rule = `|---|${DEMO.graces.map(() => "---|").join("")}`;
  const rows = DEMO.preStops.map((preStop) => {
    const row = DEMO.graces.map((grace) => {
      const cell = cells.find((candidate) => candidate.preStop === preStop && candidate.grace === grace);
      return cell ? describeCounts(cell.counts) : "";
    });
    return `| ${preStopPreset(preStop, setup)} | ${row.join(" | ")} |`;
  });
  return [header, rule, ...rows].join("\n");
}
