import { DEMO } from "./demo.js";
import { DEFAULT_SETUP, type RacePlatform, runSetup, type SetupRun } from "./race-setup.js";

export interface DemoCell extends SetupRun {
  readonly preStop: number;
  readonly grace: number;
}

/**
 * One cell of the demo, run by `runSetup` like every other setup, so the grid `pnpm simulate`
 * prints and the page's preset buttons are the same run. Default: the document's own model.
 */
export function runDemoCell(preStop: number, grace: number, platform: RacePlatform = "document"): DemoCell {
  return { preStop, grace, ...runSetup({ ...DEFAULT_SETUP, platform, preStop, grace }) };
}

/** Every preStop × grace of the demo, row by row. */
export function demoGrid(platform: RacePlatform = "document"): DemoCell[] {
  return DEMO.preStops.flatMap((preStop) =>
    DEMO.graces.map((grace) => runDemoCell(preStop, grace, platform)),
  );
}
