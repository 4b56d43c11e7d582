/**
 * Whether the built console in `dist/` is older than its sources, and building it when it is. `npm start`
 * builds through here after taking the data directory's lock (never under a running service); the test
 * runner and the end-to-end harness use the same rule.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** What the console build reads; a change to any of them makes `dist/` stale. */
const buildInputs = [
  "src",
  "renderer",
  "screens",
  "schemas",
  "index.html",
  "vite.config.ts",
  "package.json",
  "package-lock.json",
];

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Why `dist/` needs a build, or null when it is up to date. */
export function buildStaleness(rootDir: string): string | null {
  const builtIndex = join(rootDir, "dist", "index.html");
  if (!existsSync(builtIndex)) return "dist/ is missing";
  const built = statSync(builtIndex).mtimeMs;
  for (const input of buildInputs) {
    if (newestMtime(join(rootDir, input)) > built) return `${input} changed since the last build`;
  }
  return null;
}

/** Runs `npm run build` when `dist/` is missing or stale. */
export function ensureBuilt(rootDir: string, log: (line: string) => void = (line) => console.log(line)): void {
  const reason = buildStaleness(rootDir);
  if (!reason) return;
  log(`Building the console (${reason}): npm run build`);
  // A production bundle, as users get: vitest's NODE_ENV=test would make a development one.
  execFileSync("npm", ["run", "build"], {
    cwd: rootDir,
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production" },
  });
}
