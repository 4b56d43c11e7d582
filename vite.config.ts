// The console build. Kept a plain config object so the service can also run Vite in middleware mode
// (`npm run dev`); test configuration lives in vitest.config.ts.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    proxy: { "/graphql": { target: process.env.NODEPLANE_API ?? "http://localhost:8080", changeOrigin: true } },
  },
});
