import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The page lives in web/; `vite build` writes it to dist/, which the server serves.
export default defineConfig({
  root: "web",
  plugins: [react()],
  build: { outDir: "../dist", emptyOutDir: true },
});
