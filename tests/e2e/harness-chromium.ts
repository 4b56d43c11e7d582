/**
 * Finding Debian's Chromium for the end-to-end tests (no vitest import: `tests/run.ts` uses it too).
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";

/** The flags Chromium runs with, and only these (plus a fresh profile and Playwright's pipe). */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const installCommand = "apt-get update && apt-get install -y chromium";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium executable: `CHROMIUM_PATH`, else `/usr/bin/chromium`. When it is missing and we are
 * root, installs Debian's `chromium` package (and says so); otherwise throws with the command to run.
 */
export function ensureChromium(log: (line: string) => void = (line) => console.log(line)): string {
  const path = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (executable(path)) return path;
  if (process.env.CHROMIUM_PATH) {
    throw new Error(`CHROMIUM_PATH=${path} is not an executable file.`);
  }
  if (process.getuid?.() !== 0) {
    throw new Error(`Chromium is not installed (${path} is missing). Install it with:\n  sudo ${installCommand}`);
  }
  log(`Chromium is missing: installing Debian's chromium package (${installCommand})…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit", env });
  if (!executable(path)) throw new Error(`Installed chromium, but ${path} is still not there.`);
  log(`Installed ${path}.`);
  return path;
}
