import type { AgentManifest } from "@pai/core";
import { createContext, type ReactNode, useContext, useEffect, useState } from "react";
import { trpc } from "./pai.js";
import type { FieldSchema } from "./schema-form.js";

const ManifestContext = createContext<AgentManifest | null>(null);

/** Loads the agent manifest once (retrying while the server is down) and provides it. */
export function ManifestProvider({ children }: { children: ReactNode }): ReactNode {
  const [manifest, setManifest] = useState<AgentManifest | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () => {
      trpc.manifest.query().then(
        (value) => {
          if (!stopped) setManifest(value as AgentManifest);
        },
        () => {
          if (!stopped) timer = setTimeout(load, 1_000);
        },
      );
    };
    load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  return <ManifestContext.Provider value={manifest}>{children}</ManifestContext.Provider>;
}

export function useManifest(): AgentManifest | null {
  return useContext(ManifestContext);
}

/**
 * The JSON Schema a pending action's answer must match: the suspend point's resume schema, or
 * the tool's output schema for an output action. Null when unknown (a frontend-defined tool).
 */
export function answerSchema(
  manifest: AgentManifest | null,
  toolName: string,
  suspendName: string | null | undefined,
): FieldSchema | null {
  const tool = manifest?.tools[toolName];
  if (!tool) return null;
  const schema = suspendName ? tool.suspend[suspendName]?.resumeSchema : tool.outputSchema;
  return (schema as FieldSchema | undefined) ?? null;
}
