import fs from "node:fs";
import { renderConfigTable, withConfigTable } from "@outbox/shared";
import { repoPath } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { configPages } from "./docs/config-pages.js";

describe("committed config tables", () => {
  it.each(configPages.map((entry) => [entry.page, entry] as const))(
    "%s matches the settings in code",
    (_page, entry) => {
      const committed = fs.readFileSync(repoPath(entry.page), "utf8");
      const expected = withConfigTable(committed, renderConfigTable(entry.settings));
      // On failure run `pnpm docs:config` and commit the result.
      expect(committed).toBe(expected);
    },
  );
});
