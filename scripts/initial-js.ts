/**
 * The initial JavaScript of a console route, from the build's manifest and without a browser: the chunks
 * the page's entry (index.html) imports statically, with those of the signed-in shell (src/SignedIn.tsx)
 * and of the route's view kinds (renderer/views/<Kind>View.tsx), which the console imports as soon as it
 * knows who is signed in and which screen is at the address (renderer/preload.ts). Counted at the gzip
 * size of the build's `.gz` copies, as `npm run bench -- console` counts what Chromium fetched.
 *
 *   node --import tsx scripts/initial-js.ts            builds dist/ when stale, checks every budget
 *
 * What loads later (a widget, a filter's options, a dialog, a chart) is not counted: it is lazy, so it
 * is fetched when the page shows it. A module the shell or a view imports statically is counted, and
 * that is what grows as areas add screens; a new screen is lazy by default.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { matchRoutes } from "react-router";
import type { View } from "../renderer/types.ts";
import { ensureBuilt } from "../server/platform/console-build.ts";

/** One entry of Vite's `.vite/manifest.json` (the fields read here). */
export interface ManifestChunk {
  file: string;
  imports?: string[];
  dynamicImports?: string[];
  isEntry?: boolean;
}
export type BuildManifest = Record<string, ManifestChunk>;

export interface Budget {
  route: string;
  /** Most gzip bytes of JavaScript the route may load before it is drawn. */
  maxGzipBytes: number;
}

/** The budgets CI holds the console to (issue 32: /endpoints ≤ 240 kB). */
export const BUDGETS: Budget[] = [{ route: "/endpoints", maxGzipBytes: 240 * 1024 }];

/** The signed-in shell, imported once the viewer query names someone (src/Shell.tsx). */
const SIGNED_IN_SHELL = "src/SignedIn.tsx";
/** Where each view kind's code is (renderer/views/modules.ts imports these lazily). */
const VIEW_SOURCES = {
  list: "renderer/views/ListView.tsx",
  detail: "renderer/views/DetailView.tsx",
  form: "renderer/views/FormView.tsx",
  chart: "renderer/views/ChartView.tsx",
  custom: "renderer/views/CustomView.tsx",
  alert: "renderer/views/AlertView.tsx",
} satisfies Record<View["kind"], string>;

/** The manifest keys of `entries` and of every chunk they import statically, each once. */
export function staticClosure(manifest: BuildManifest, entries: string[]): string[] {
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    const chunk = manifest[key];
    if (!chunk) throw new Error(`the build's manifest has no chunk for ${key}`);
    seen.add(key);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const entry of entries) visit(entry);
  return [...seen];
}

interface ScreenManifest {
  id: string;
  route: string;
  views: { kind: View["kind"] }[];
}

function screenManifests(rootDir: string): ScreenManifest[] {
  const dir = path.join(rootDir, "screens");
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".screen.json"))
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), "utf8")) as ScreenManifest);
}

/** The modules a signed-in load of `route` imports first: the page's entry, the shell, the screen's views. */
export function routeEntries(screens: ScreenManifest[], route: string): string[] {
  // Ranked as the console's router ranks the registry's routes (renderer/preload.ts).
  const matched = matchRoutes(
    screens.map((screen) => ({ path: screen.route, screen })),
    route,
  )?.at(-1);
  if (!matched) throw new Error(`no screen answers ${route}`);
  const kinds = [...new Set(matched.route.screen.views.map((view) => view.kind))];
  return ["index.html", SIGNED_IN_SHELL, ...kinds.map((kind) => VIEW_SOURCES[kind])];
}

export interface InitialJs {
  route: string;
  gzipBytes: number;
  files: { file: string; gzipBytes: number }[];
}

/**
 * Scripts index.html names that are not modules of the build's manifest: the first-page script the build
 * writes (vite.config.ts, `firstPagePreload`), which every page loads.
 */
function htmlOnlyScripts(distDir: string, manifest: BuildManifest): string[] {
  const html = readFileSync(path.join(distDir, "index.html"), "utf8");
  const modules = new Set(Object.values(manifest).map((chunk) => chunk.file));
  return [...html.matchAll(/<script\b[^>]*\bsrc="\/([^"]+)"/g)]
    .map((match) => match[1])
    .filter((file) => !modules.has(file));
}

/** The route's initial JavaScript in the build at `distDir`. */
export function initialJs(rootDir: string, distDir: string, route: string): InitialJs {
  const manifestFile = path.join(distDir, ".vite", "manifest.json");
  if (!existsSync(manifestFile)) throw new Error(`${manifestFile} is missing: the build writes it (vite.config.ts)`);
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as BuildManifest;
  const modules = staticClosure(manifest, routeEntries(screenManifests(rootDir), route)).map(
    (key) => manifest[key].file,
  );
  const files = [...modules, ...htmlOnlyScripts(distDir, manifest)]
    .filter((file) => file.endsWith(".js"))
    .map((file) => {
      const gz = path.join(distDir, `${file}.gz`);
      if (!existsSync(gz)) throw new Error(`${file} has no .gz copy in ${distDir}`);
      return { file, gzipBytes: statSync(gz).size };
    })
    .sort((a, b) => b.gzipBytes - a.gzipBytes);
  return { route, gzipBytes: files.reduce((sum, f) => sum + f.gzipBytes, 0), files };
}

const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const rootDir = path.resolve(import.meta.dirname, "..");
  ensureBuilt(rootDir);
  let over = 0;
  for (const budget of BUDGETS) {
    const measured = initialJs(rootDir, path.join(rootDir, "dist"), budget.route);
    const ok = measured.gzipBytes <= budget.maxGzipBytes;
    if (!ok) over++;
    console.log(
      `${ok ? "within" : "OVER"} budget: ${budget.route} loads ${kB(measured.gzipBytes)} of JavaScript (gzip) in ${measured.files.length} files; budget ${kB(budget.maxGzipBytes)}`,
    );
    if (!ok)
      for (const file of measured.files.slice(0, 12)) console.log(`  ${kB(file.gzipBytes).padStart(9)}  ${file.file}`);
  }
  process.exit(over === 0 ? 0 : 1);
}
