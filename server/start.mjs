/**
 * `npm start`: the service from its bundle (platform/server-build.mjs) when that was built from the
 * sources as they are now; otherwise from the sources through tsx, as `npm run dev` runs them, and then
 * main.ts, once this start holds the data directory, builds the bundle for the next start.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { SERVER_BUNDLE, serverBuildStaleness } from "./platform/server-build.mjs";

const rootDir = path.resolve(import.meta.dirname, "..");
if (serverBuildStaleness(rootDir) === null) {
  await import(pathToFileURL(path.join(rootDir, SERVER_BUNDLE)).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./main.ts");
}
