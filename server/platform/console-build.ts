/**
 * Whether the built console in `dist/` was built from the sources as they are now, and building it when
 * it was not. `npm start` builds through here after taking the data directory's lock (never under a
 * running service); the test runner and the end-to-end harness use the same rule.
 *
 * The rule is a hash of the build's inputs (their paths and contents), which every build writes beside
 * its output (vite.config.ts): a checkout, a copy or `touch` that changes no byte keeps the build, any changed byte rebuilds.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileDigests } from "./file-digests.mjs";

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

/** Where the hash of the inputs a build was made from is kept (a dot file: the console does not serve it). */
export const BUILD_STAMP = ".inputs-sha256";

/** The files under an input (or the input itself when it is a file), in a stable order. */
function inputFiles(rootDir: string, relative: string): string[] {
  const full = join(rootDir, relative);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [relative];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relativeTo(rootDir, join(entry.parentPath, entry.name)))
    .sort();
}

function relativeTo(rootDir: string, file: string): string {
  return file.slice(rootDir.length + 1);
}

/**
 * The hash of the paths and contents of the files under `inputs` (files or folders of rootDir), each
 * file's contents by its digest (read again only when the file changed: file-digests.mjs).
 */
export function inputsHash(rootDir: string, inputs: string[]): string {
  const hash = createHash("sha256");
  for (const input of inputs) {
    const files = inputFiles(rootDir, input);
    const digests = fileDigests(rootDir, files);
    files.forEach((file, i) => {
      hash.update(`${file}\0${digests[i]}\0`);
    });
  }
  return hash.digest("hex");
}

/** The hash of everything the console build reads. */
export function buildInputsHash(rootDir: string): string {
  return inputsHash(rootDir, buildInputs);
}

/** Why `dist/` needs a build, or null when it was built from the current inputs. */
export function buildStaleness(rootDir: string): string | null {
  if (!existsSync(join(rootDir, "dist", "index.html"))) return "dist/ is missing";
  const stamp = join(rootDir, "dist", BUILD_STAMP);
  if (!existsSync(stamp)) return "dist/ does not say what it was built from";
  if (readFileSync(stamp, "utf8").trim() !== buildInputsHash(rootDir)) return "the console's sources changed";
  return null;
}

/**
 * `npm run build` without npm: Vite's own command run by this Node (npm's start-up is ~0.3 s of a
 * fresh start). A production bundle, as users get: vitest's NODE_ENV=test would make a development one.
 */
function buildCommand(rootDir: string): { file: string; args: string[]; env: NodeJS.ProcessEnv } {
  const vitePackage = createRequire(join(rootDir, "package.json")).resolve("vite/package.json");
  return {
    file: process.execPath,
    args: [join(dirname(vitePackage), "bin", "vite.js"), "build"],
    env: { ...process.env, NODE_ENV: "production" },
  };
}

/** Builds the console when `dist/` is missing or stale, waiting for it (the build records its inputs: vite.config.ts). */
export function ensureBuilt(rootDir: string, log: (line: string) => void = (line) => console.log(line)): void {
  const reason = buildStaleness(rootDir);
  if (!reason) return;
  log(`Building the console (${reason}): vite build`);
  const command = buildCommand(rootDir);
  execFileSync(command.file, command.args, { cwd: rootDir, stdio: "inherit", env: command.env });
}

/**
 * The same, in the background: `npm start` builds while its database starts and serves the console when
 * the build has ended. Resolves at once when `dist/` is current; rejects when the build fails. `stop`
 * ends a build still running (the start failed before it was needed).
 */
export function startBuilding(
  rootDir: string,
  log: (line: string) => void = (line) => console.log(line),
): { built: Promise<void>; stop: () => void } {
  const reason = buildStaleness(rootDir);
  if (!reason) return { built: Promise.resolve(), stop: () => undefined };
  log(`Building the console (${reason}): vite build`);
  const command = buildCommand(rootDir);
  const child = spawn(command.file, command.args, { cwd: rootDir, stdio: "inherit", env: command.env });
  const built = new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`the console build failed (${signal ?? `exit code ${code}`})`)),
    );
  });
  return { built, stop: () => child.exitCode === null && child.kill() };
}
