import { jsonSchema } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentManifest } from "../manifest/agent-manifest.js";
import { defineAgent } from "./define-agent.js";
import { defineTool } from "./define-tool.js";

const approve = defineTool({
  id: "test.approve.v1",
  description: "Ask for approval.",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    review: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
    ack: { suspendSchema: z.object({}), resumeSchema: z.object({ ok: z.literal(true) }) },
  },
  dataSchemas: { progress: z.object({ pct: z.number() }), log: z.string() },
  execute: (ctx) => ctx.suspend("review", { prompt: ctx.input.summary }),
});
const selection = defineTool({
  id: "test.selection",
  description: ({ context }: { context: unknown }) => `ctx: ${String(context)}`,
  inputSchema: jsonSchema<{ limit?: number }>({ type: "object", properties: { limit: { type: "number" } } }),
});

const agent = defineAgent({
  tools: {
    zeta: approve,
    alpha: { tool: selection, enabled: false },
  },
});

describe("agentManifest", () => {
  it("lists every registration (disabled included) with sorted keys and JSON Schemas", async () => {
    const manifest = await agentManifest(agent);
    expect(Object.keys(manifest.tools)).toEqual(["alpha", "zeta"]);
    expect(Object.keys(manifest.tools.zeta.suspend)).toEqual(["ack", "review"]);
    expect(Object.keys(manifest.tools.zeta.dataChannels)).toEqual(["log", "progress"]);
    expect(manifest).toMatchInlineSnapshot(`
      {
        "tools": {
          "alpha": {
            "dataChannels": {},
            "description": "",
            "hasExecute": false,
            "id": "test.selection",
            "inputSchema": {
              "properties": {
                "limit": {
                  "type": "number",
                },
              },
              "type": "object",
            },
            "suspend": {},
          },
          "zeta": {
            "dataChannels": {
              "log": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "string",
              },
              "progress": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "additionalProperties": false,
                "properties": {
                  "pct": {
                    "type": "number",
                  },
                },
                "required": [
                  "pct",
                ],
                "type": "object",
              },
            },
            "description": "Ask for approval.",
            "hasExecute": true,
            "id": "test.approve.v1",
            "inputSchema": {
              "$schema": "http://json-schema.org/draft-07/schema#",
              "additionalProperties": false,
              "properties": {
                "summary": {
                  "type": "string",
                },
              },
              "required": [
                "summary",
              ],
              "type": "object",
            },
            "outputSchema": {
              "$schema": "http://json-schema.org/draft-07/schema#",
              "additionalProperties": false,
              "properties": {
                "approved": {
                  "type": "boolean",
                },
              },
              "required": [
                "approved",
              ],
              "type": "object",
            },
            "suspend": {
              "ack": {
                "resumeSchema": {
                  "$schema": "http://json-schema.org/draft-07/schema#",
                  "additionalProperties": false,
                  "properties": {
                    "ok": {
                      "const": true,
                      "type": "boolean",
                    },
                  },
                  "required": [
                    "ok",
                  ],
                  "type": "object",
                },
                "suspendSchema": {
                  "$schema": "http://json-schema.org/draft-07/schema#",
                  "additionalProperties": false,
                  "properties": {},
                  "type": "object",
                },
              },
              "review": {
                "resumeSchema": {
                  "$schema": "http://json-schema.org/draft-07/schema#",
                  "additionalProperties": false,
                  "properties": {
                    "approved": {
                      "type": "boolean",
                    },
                  },
                  "required": [
                    "approved",
                  ],
                  "type": "object",
                },
                "suspendSchema": {
                  "$schema": "http://json-schema.org/draft-07/schema#",
                  "additionalProperties": false,
                  "properties": {
                    "prompt": {
                      "type": "string",
                    },
                  },
                  "required": [
                    "prompt",
                  ],
                  "type": "object",
                },
              },
            },
          },
        },
      }
    `);
  });

  it("is deterministic and JSON-serializable", async () => {
    const first = JSON.stringify(await agentManifest(agent));
    const second = JSON.stringify(await agentManifest(agent));
    expect(first).toBe(second);
    expect(JSON.parse(first)).toEqual(await agentManifest(agent));
  });

  it("includes the message metadata schema when declared", async () => {
    const withMetadata = defineAgent({ tools: {}, messageMetadata: z.object({ mood: z.string() }) });
    expect((await agentManifest(withMetadata)).messageMetadata).toMatchObject({
      type: "object",
      properties: { mood: { type: "string" } },
    });
  });
});
