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
    rolldownOptions: {
      output: {
        // Named vendor chunks shared by every screen; rjsf/ajv and ECharts stay in the lazy chunks of
        // the views that need them (FormView, RunnerView, action dialogs, ChartPanel).
        codeSplitting: {
          groups: [
            { name: "react", test: /node_modules[\\/](react|react-dom|scheduler|react-router)[\\/]/, priority: 3 },
            {
              name: "antd",
              test: /node_modules[\\/](antd|@ant-design|@rc-component|rc-[^\\/]+|dayjs)[\\/]/,
              priority: 2,
            },
          ],
        },
      },
    },
  },
  server: {
    proxy: { "/graphql": { target: process.env.NODEPLANE_API ?? "http://localhost:8080", changeOrigin: true } },
  },
});
