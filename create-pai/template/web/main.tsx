import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app.tsx";
import { Pai, paiClient } from "./pai.ts";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element.");

createRoot(root).render(
  <StrictMode>
    <Pai.Provider client={paiClient}>
      <App />
    </Pai.Provider>
  </StrictMode>,
);
