/**
 * One Chromium for the end-to-end suite (a vitest globalSetup of the `e2e` project): launched once with
 * exactly CHROMIUM_FLAGS and a fresh profile, served over Playwright's WebSocket; each file connects to it
 * (`useE2E`) and opens its own contexts, so no file sees another's cookies or storage. A launch and a close
 * cost ~3 CPU-s, which every file paid.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";
import { CHROMIUM_FLAGS, ensureChromium } from "./harness-chromium.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The suite's Chromium, for `chromium.connect()`. */
    chromiumEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const executablePath = ensureChromium();
  const userDataDir = mkdtempSync(join(tmpdir(), "nodeplane-chromium-"));
  const server = await chromium.launchServer({
    executablePath,
    // Playwright's own defaults are replaced by our flags; it still needs its pipe to drive the browser.
    ignoreDefaultArgs: true,
    args: [...CHROMIUM_FLAGS, `--user-data-dir=${userDataDir}`, "--remote-debugging-pipe"],
    timeout: 60_000,
  });
  project.provide("chromiumEndpoint", server.wsEndpoint());
  return async () => {
    await server.close().catch(() => undefined);
    rmSync(userDataDir, { recursive: true, force: true });
  };
}
