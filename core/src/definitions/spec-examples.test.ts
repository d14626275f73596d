import { describe, expect, it } from "vitest";
import {
  customerAgent,
  deleteAccount,
  draftReport,
  exampleAgent,
  getSelectedText,
  guardedTotal,
  requestApproval,
  runScript,
  sandbox,
  taskAgent,
} from "../../test/fixtures/spec-examples.js";
import { agentManifest } from "../manifest/agent-manifest.js";

describe("spec examples", () => {
  it("define frozen tools with the spec's runtime shape", () => {
    expect(requestApproval.kind).toBe("tool");
    expect(typeof requestApproval.execute).toBe("function");
    expect(Object.keys(requestApproval.config.suspend ?? {})).toEqual(["approval"]);
    expect(getSelectedText.execute).toBeUndefined();
    expect(runScript.capabilities).toEqual({ box: sandbox });
    expect(Object.keys(guardedTotal.tools ?? {})).toEqual(["report"]);
    expect(draftReport.id).toBe("draftReport");
  });

  it("describe guardedTotal from its context and enabled children", () => {
    const describeTool = guardedTotal.config.description;
    if (typeof describeTool !== "function") throw new Error("expected a description callback");
    const withReport = describeTool({
      context: { currency: "EUR", canRead: true },
      tools: { report: { description: "Reads one region.", inputSchema: {} as never } },
    });
    expect(withReport).toBe("Totals the report in EUR. Reads one region.");
    expect(describeTool({ context: { currency: "EUR", canRead: false }, tools: {} })).toBe(
      "Reports cannot be read right now.",
    );
  });

  it("register tools on agents with mapContext and enabled resolvers", async () => {
    expect(Object.keys(customerAgent.tools)).toEqual(["lookupCustomer"]);
    expect(typeof taskAgent.tools.createTask.mapContext).toBe("function");
    expect(exampleAgent.tools.sandboxCommand.enabled).toBe(false);
    expect(deleteAccount.id).toBe("deleteAccount");
    const manifest = await agentManifest(exampleAgent);
    expect(Object.keys(manifest.tools)).toEqual(Object.keys(exampleAgent.tools).sort());
    expect(manifest.tools.formatPrice.description).toBe("");
    expect(manifest.tools.runBrowserCheck.hasExecute).toBe(false);
    expect(Object.keys(manifest.tools.draftReport.suspend)).toEqual([
      "approveDraft",
      "attachReferenceFile",
      "collectDetails",
    ]);
    expect(Object.keys(manifest.tools.deployService.dataChannels)).toEqual(["progress"]);
  });
});
