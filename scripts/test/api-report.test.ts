import { describe, expect, it } from "vitest";
import { generateApiReports, readApiReports } from "../api-report.mjs";
import { lineDiff } from "./line-diff.js";

// The checked-in `api/*.api.md` are the reviewed public surface of every published entry point.
// A change of surface must show up in the same diff as the code that changed it, so this fails
// until the reports are regenerated (and the change is reviewed).

describe("API reports (api/*.api.md)", () => {
  it("match the built declarations of every published entry point", async () => {
    const generated = generateApiReports();
    const checkedIn = await readApiReports();
    const problems: string[] = [];
    for (const [name, text] of generated) {
      const current = checkedIn.get(name);
      if (current === undefined) problems.push(`api/${name} is missing (a new entry point?)`);
      else if (current !== text) {
        problems.push(
          `--- api/${name} (checked in)\n+++ api/${name} (generated)\n${lineDiff(current, text)}`,
        );
      }
    }
    for (const name of checkedIn.keys()) {
      if (!generated.has(name)) problems.push(`api/${name} belongs to no published entry point any more`);
    }
    if (problems.length > 0) {
      expect.fail(
        `${problems.join("\n\n")}\n\nThe public surface changed. If that is intended, run \`npm run build && npm run api:report\` and commit api/.`,
      );
    }
  });
});
