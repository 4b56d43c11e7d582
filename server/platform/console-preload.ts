// What a signed-in load of a console page will import, named in the page itself. The console learns who
// is signed in from its viewer query, and only then imports the signed-in shell (src/SignedIn.tsx) and,
// once the registry answers, the screen's view kinds (renderer/views/<Kind>View.tsx): two downloads one
// after the other behind two round trips. A document asked for with a session cookie names that code as
// `modulepreload` links, so the browser fetches it beside the entry's. A stale cookie only costs bytes.
// scripts/initial-js.ts counts the same closure against the budget.
import { readFileSync, statSync } from "node:fs";
import path from "node:path";

/** One entry of Vite's `.vite/manifest.json` (the fields read here). */
export interface ManifestChunk {
  file: string;
  imports?: string[];
  dynamicImports?: string[];
  isEntry?: boolean;
}
export type BuildManifest = Record<string, ManifestChunk>;

/** A screen manifest's route and view kinds (the fields read here). */
export interface ScreenRoute {
  route: string;
  views: { kind: string }[];
}

/** The signed-in shell, imported once the viewer query names someone (src/Shell.tsx). */
export const SIGNED_IN_SHELL = "src/SignedIn.tsx";
/** Where each view kind's code is (renderer/views/modules.ts imports these lazily). */
export const VIEW_SOURCES = {
  list: "renderer/views/ListView.tsx",
  detail: "renderer/views/DetailView.tsx",
  form: "renderer/views/FormView.tsx",
  chart: "renderer/views/ChartView.tsx",
  custom: "renderer/views/CustomView.tsx",
  alert: "renderer/views/AlertView.tsx",
} as const;
const viewSource = (kind: string): string | undefined => (VIEW_SOURCES as Record<string, string>)[kind];

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

/** How react-router ranks a route's segments: a static one above a parameter. */
const segmentScore = (segment: string) => (segment.startsWith(":") ? 3 : 10);

/** The screen that answers `pathname`, ranked as the console's router ranks the registry's routes. */
export function screenAt<S extends ScreenRoute>(screens: S[], pathname: string): S | undefined {
  const parts = pathname.split("/").filter(Boolean);
  let best: { screen: S; score: number } | undefined;
  for (const screen of screens) {
    const segments = screen.route.split("/").filter(Boolean);
    if (segments.length !== parts.length) continue;
    if (!segments.every((segment, i) => segment.startsWith(":") || segment === parts[i])) continue;
    const score = segments.reduce((sum, segment) => sum + segmentScore(segment), 0);
    if (!best || score > best.score) best = { screen, score };
  }
  return best?.screen;
}

/** What the console imports once someone is signed in at `screen`'s address: the shell, the screen's views. */
export function signedInEntries(screen: ScreenRoute | undefined): string[] {
  const kinds = [...new Set(screen?.views.map((view) => view.kind))];
  return [SIGNED_IN_SHELL, ...kinds.flatMap((kind) => viewSource(kind) ?? [])];
}

/** The script files a signed-in load of `pathname` imports that the page's entry does not already name. */
export function signedInPreloads(manifest: BuildManifest, screens: ScreenRoute[], pathname: string): string[] {
  const named = new Set(staticClosure(manifest, ["index.html"]));
  return staticClosure(manifest, signedInEntries(screenAt(screens, pathname)))
    .filter((key) => !named.has(key))
    .map((key) => manifest[key].file)
    .filter((file) => file.endsWith(".js"));
}

/** `html` with a modulepreload link per file, at the end of its head (after the entry's own). */
export function withModulePreloads(html: string, files: string[]): string {
  if (files.length === 0) return html;
  const links = files.map((file) => `<link rel="modulepreload" crossorigin href="/${file}">`).join("");
  return html.replace("</head>", `${links}</head>`);
}

/** The build's manifest, read again when the build changes (the service serves a rebuilt console). */
export function buildManifestReader(distDir: string): () => BuildManifest | undefined {
  const file = path.join(distDir, ".vite", "manifest.json");
  let cached: { mtimeMs: number; manifest: BuildManifest } | undefined;
  return () => {
    try {
      const { mtimeMs } = statSync(file);
      if (cached?.mtimeMs !== mtimeMs)
        cached = { mtimeMs, manifest: JSON.parse(readFileSync(file, "utf8")) as BuildManifest };
      return cached.manifest;
    } catch {
      return undefined;
    }
  };
}
