import { toolManifestEntry } from "@pai/core";
import type { RJSFSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { describe, expect, it } from "vitest";
import { draftReport, requestApproval } from "../server/tools.js";
import { friendlyErrors, issuesByField } from "../web/src/form-messages.js";

// The generated forms' client-side checks: the real resume schemas (as the manifest serves them)
// through rjsf's Ajv validator, with the playground's messages.

async function resumeSchema(tool: Parameters<typeof toolManifestEntry>[0], point: string) {
  return (await toolManifestEntry(tool)).suspend[point].resumeSchema as RJSFSchema;
}

const messagesFor = (schema: RJSFSchema, data: Record<string, unknown>) =>
  validator
    .validateFormData(data, schema, undefined, friendlyErrors)
    // Ajv roots "required" at the object and the rest at the field: compare by field name.
    .errors.map((error) => [error.property?.replace(/^\./, ""), error.message]);

describe("generated form messages", () => {
  it("words the report's checks for a person, per field", async () => {
    const details = await resumeSchema(draftReport, "collectDetails");
    expect(messagesFor(details, {})).toEqual([
      ["audience", "This field is required."],
      ["sections", "This field is required."],
      ["tone", "This field is required."],
    ]);
    expect(messagesFor(details, { audience: "x", sections: 12, tone: "friendly" })).toEqual([
      ["audience", "Use at least 2 characters."],
      ["sections", "Must be at most 8."],
    ]);
    expect(messagesFor(details, { audience: "Board", sections: 2.5, tone: "loud" })).toEqual([
      ["sections", "Enter a whole number."],
      ["tone", "Choose one of: formal, friendly, brief."],
    ]);
    const reference = await resumeSchema(draftReport, "attachReferenceFile");
    expect(messagesFor(reference, { title: "Spec", url: "not a url" })).toEqual([
      ["url", "Enter a full URL (https://...)."],
    ]);
    expect(messagesFor(reference, { title: "Spec", url: "https://example.com/spec.pdf" })).toEqual([]);
  });

  it("keeps each field's title and description in the schema the form is generated from", async () => {
    const details = await resumeSchema(draftReport, "collectDetails");
    expect(details.properties?.audience).toMatchObject({
      title: "Audience",
      description: "Who reads the report, e.g. the product team.",
    });
    const approval = await resumeSchema(requestApproval, "approval");
    expect(approval.properties?.comment).toMatchObject({ title: "Comment" });
  });

  it("puts the server's issues at the fields they name, wherever the path is rooted", () => {
    const error = Object.assign(new Error("Invalid payload."), {
      issues: [
        { path: ["payload", "audience"], message: "Name the audience (at least 2 characters)." },
        { path: ["sections"], message: "Too many." },
        { path: ["payload", "unknown"], message: "Ignored." },
      ],
    });
    expect(issuesByField(error, ["audience", "sections", "tone"])).toEqual({
      audience: { __errors: ["Name the audience (at least 2 characters)."] },
      sections: { __errors: ["Too many."] },
    });
    expect(issuesByField(new Error("Failed to fetch"), ["audience"])).toEqual({});
  });
});
