/**
 * `npm start`: the service from its bundle (platform/server-build.mjs) when that was built from the
 * sources as they are now. Otherwise, with --build (as `npm start` runs it), from a bundle it builds now in
 * a folder of its own, which main.ts installs once this start holds the data directory; without it, from
 * the sources through tsx, as `npm run dev` runs them.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  SERVER_BUNDLE,
  STAGED_BUILD_ENV,
  serverBuildStaleness,
  stageServerBuild,
} from "./platform/server-build.mjs";

const rootDir = path.resolve(import.meta.dirname, "..");
if (serverBuildStaleness(rootDir) === null) {
  await import(pathToFileURL(path.join(rootDir, SERVER_BUNDLE)).href);
} else if (process.argv.includes("--build")) {
  const staging = await stageServerBuild(rootDir, "start");
  process.env[STAGED_BUILD_ENV] = staging;
  // What main.ts did not install (a start refused by the service lock) goes with this process.
  process.on("exit", () => rmSync(staging, { recursive: true, force: true }));
  await import(pathToFileURL(path.join(staging, path.basename(SERVER_BUNDLE))).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./main.ts");
}
