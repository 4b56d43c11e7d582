import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

// `npm ci` on a fresh clone refuses a lock file that lacks other platforms' optional binaries;
// `node scripts/complete-lockfile.mjs` adds them back after an `npm install`.
it("lists every optional platform package, so npm ci accepts it on a fresh clone", () => {
  const lock = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package-lock.json"), "utf8")) as {
    packages: Record<string, { optionalDependencies?: Record<string, string> }>;
  };
  const missing: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
      if (!lock.packages[`${where}/node_modules/${dep}`] && !lock.packages[`node_modules/${dep}`]) missing.push(dep);
    }
  }
  expect(missing).toEqual([]);
});
