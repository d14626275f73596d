import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app.js";
import { ManifestProvider } from "./manifest.js";
import { NothingSelected, Pai, paiClient } from "./pai.js";
import { trackSelection } from "./selection.js";
import "./styles.css";

trackSelection();

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element.");

createRoot(root).render(
  <StrictMode>
    <Pai.Provider
      client={paiClient}
      onClientToolError={(error, info) => {
        // An empty selection is expected: the action waits and the renderer asks the user instead.
        if (error instanceof NothingSelected) return;
        console.error(`Client tool ${info.toolName} (${info.phase}) could not answer:`, error);
      }}
    >
      <ManifestProvider>
        <App />
      </ManifestProvider>
    </Pai.Provider>
  </StrictMode>,
);
