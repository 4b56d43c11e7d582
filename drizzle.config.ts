import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./server/domains/tables.ts",
  out: "./server/platform/migrations",
});
