/**
 * The console build rule (server/platform/console-build.ts) bound to this repository, for the test runner
 * and the end-to-end harness (no vitest import: `tests/run.ts` uses it too).
 */
import { resolve } from "node:path";
import * as consoleBuild from "../../server/platform/console-build.ts";

export const repoRoot = resolve(import.meta.dirname, "../..");

/** Why `dist/` needs a build, or null when it is up to date. */
export const buildStaleness = (): string | null => consoleBuild.buildStaleness(repoRoot);

/** Builds the console (Vite) when `dist/` is missing or stale. */
export const ensureBuilt = (log?: (line: string) => void): void => consoleBuild.ensureBuilt(repoRoot, log);
