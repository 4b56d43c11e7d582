// The console build. Kept a plain config object so the service can also run Vite in middleware mode
// (`npm run dev`); test configuration lives in vitest.config.ts.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";
import { FIRST_ANSWERS, graphqlRequest, REGISTRY_DOCUMENT } from "./renderer/transport.ts";
import { BUILD_STAMP, buildInputsHash } from "./server/platform/console-build.ts";
import { SIGNED_OUT_PAGE, VIEWER_DOCUMENT } from "./src/firstPage.ts";

const BROTLI_QUALITY = 5;
/** Files worth compressing: text. Images and fonts in these formats are already compressed. */
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

/**
 * Writes a brotli (`.br`) and a gzip (`.gz`) copy beside every text file of the build: they are made once
 * here, and the service sends the one the browser accepts (@fastify/static's `preCompressed`) without
 * compressing per request. Brotli at quality 5, not 11: 11 took ~3.7 s of CPU for the ~2.6 MB of scripts
 * (most of a fresh clone's first `npm start`), 5 takes ~0.1 s for files 9% larger (still 5% under gzip's).
 */
function precompress(): Plugin {
  let outDir = "dist";
  return {
    name: "nodeplane-precompress",
    apply: "build",
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((entry) => {
          const file = path.join(dir, entry);
          return statSync(file).isDirectory() ? walk(file) : [file];
        });
      for (const file of walk(outDir).filter((f) => COMPRESSIBLE.test(f))) {
        const content = readFileSync(file);
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(content, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
            },
          }),
        );
        writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }));
      }
    },
  };
}

/**
 * antd's ConfigProvider imports its tooltip UniqueProvider statically, and with it @rc-component/trigger
 * (~12 kB gzip), though it draws it only with `tooltip={{ unique: true }}`. Its import is pointed at
 * src/antd/UniqueTooltipProvider.tsx, which loads the same provider when first drawn, so the boot chunk
 * carries no popup engine (a tooltip or select brings it with its own chunk).
 */
function lazyTooltipUniqueProvider(): Plugin {
  const configProvider = /[\\/]antd[\\/]es[\\/]config-provider[\\/]index\.js$/;
  const replacement = path.resolve(import.meta.dirname, "src/antd/UniqueTooltipProvider.tsx");
  return {
    name: "nodeplane-lazy-tooltip-unique-provider",
    enforce: "pre",
    resolveId(source, importer) {
      if (source === "../tooltip/UniqueProvider" && importer && configProvider.test(importer)) return replacement;
      return null;
    },
  };
}

/** Every module (or chunk) reachable from `roots` along `edges`, the roots included. */
function reachable(roots: readonly string[], edges: (node: string) => readonly string[] | undefined): Set<string> {
  const seen = new Set<string>();
  const next = [...roots];
  for (let node = next.pop(); node !== undefined; node = next.pop()) {
    if (seen.has(node)) continue;
    seen.add(node);
    next.push(...(edges(node) ?? []));
  }
  return seen;
}

/**
 * The signed-in console's own code in one chunk beside src/SignedIn.tsx's: what that page imports statically that neither the
 * entry nor another page the entry loads lazily (sign-in, sign-up, a verification link, a failure page)
 * imports. Split by default into some twenty files of antd components and icons, it came over HTTP/1.1's six
 * connections in four round trips after the registry had been asked for: the longest wait before the first
 * screen (docs/decisions/1871-signed-in-code-in-one-chunk.md). What it shares with those pages stays out, so
 * they load no more than before.
 */
function signedInChunk(): {
  plugin: Plugin;
  group: { name: string; test: (id: string) => boolean; priority: number; includeDependenciesRecursively: boolean };
} {
  const signedIn = path.resolve(import.meta.dirname, "src/SignedIn.tsx");
  const captured = new Set<string>();
  const plugin: Plugin = {
    name: "nodeplane-signed-in-chunk",
    apply: "build",
    buildEnd() {
      const closure = (roots: string[]) => reachable(roots, (id) => this.getModuleInfo(id)?.importedIds);
      const entries = [...this.getModuleIds()].filter((id) => this.getModuleInfo(id)?.isEntry);
      const entryCode = closure(entries);
      const otherPages = [...entryCode].flatMap((id) =>
        (this.getModuleInfo(id)?.dynamicallyImportedIds ?? []).filter((page) => page !== signedIn),
      );
      const elsewhere = new Set([...entryCode, ...closure(otherPages)]);
      captured.clear();
      // Not the page itself: it stays the chunk its dynamic import and the build's manifest name.
      for (const id of closure([signedIn])) if (id !== signedIn && !elsewhere.has(id)) captured.add(id);
    },
  };
  // Its dependencies outside it are those pages' and the entry's, in their own chunks: none imports back
  // into it, so leaving them out makes no cycle.
  return {
    plugin,
    group: { name: "signed-in", test: (id) => captured.has(id), priority: 4, includeDependenciesRecursively: false },
  };
}
const signedIn = signedInChunk();

/**
 * A script the page runs as its HTML arrives, before the console's entry has downloaded: it asks the
 * viewer query, and on a page that expects someone signed in the registry and the signed-in console's
 * code (modulepreload), which the entry would otherwise ask for only once its own ~145 kB had come and
 * run (docs/decisions/1872-first-requests-from-the-html.md). The answers wait in a global for the
 * transport to take (renderer/transport.ts). A file, not inline code: the CSP allows scripts from the
 * console's origin only. Written here, where the chunks' names are known, as the few lines it is.
 */
function firstPagePreload(): Plugin {
  const signedIn = path.resolve(import.meta.dirname, "src/SignedIn.tsx");
  let scriptFile: string | null = null;
  return {
    name: "nodeplane-first-page-preload",
    apply: "build",
    generateBundle: {
      // Before Vite writes index.html (its own generateBundle), which takes the script's name from here.
      order: "pre",
      handler(_options, bundle) {
        const chunks = Object.values(bundle).filter((item) => item.type === "chunk");
        const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
        const staticClosure = (roots: string[]) => reachable(roots, (file) => byFile.get(file)?.imports);
        const entry = staticClosure(chunks.filter((chunk) => chunk.isEntry).map((chunk) => chunk.fileName));
        const shell = chunks.find((chunk) => chunk.facadeModuleId === signedIn);
        if (!shell) throw new Error("the build has no chunk for src/SignedIn.tsx");
        const files = [...staticClosure([shell.fileName])].filter((file) => !entry.has(file)).sort();
        const ask = (document: string) =>
          `a[${JSON.stringify(document)}]=fetch("/graphql",${JSON.stringify(graphqlRequest(document))});`;
        const source = [
          // A block: its names stay out of the page's global scope.
          `{const a=window.${FIRST_ANSWERS}={};`,
          ask(VIEWER_DOCUMENT),
          `if(!${SIGNED_OUT_PAGE}.test(location.pathname)){`,
          ask(REGISTRY_DOCUMENT),
          `for(const f of ${JSON.stringify(files)}){const l=document.createElement("link");l.rel="modulepreload";l.crossOrigin="";l.href="/"+f;document.head.append(l)}}`,
          // An answer no one takes (the console's code failed to load) is not an unhandled rejection.
          `for(const k in a)a[k].catch(()=>{})}\n`,
        ].join("");
        const hash = createHash("sha256").update(source).digest("base64url").slice(0, 8);
        scriptFile = `assets/first-page-${hash}.js`;
        this.emitFile({ type: "asset", fileName: scriptFile, source });
      },
    },
    transformIndexHtml: {
      order: "post",
      handler() {
        if (!scriptFile) return [];
        return [{ tag: "script", attrs: { async: true, src: `/${scriptFile}` }, injectTo: "head-prepend" }];
      },
    },
  };
}

/**
 * Records what the build was made from, so `npm start` reuses it until a source changes. Hashed when the
 * build starts: an edit made while it runs leaves a stamp that no longer matches.
 */
function stampInputs(): Plugin {
  let root = ".";
  let outDir = "dist";
  let inputs = "";
  return {
    name: "nodeplane-stamp-inputs",
    apply: "build",
    configResolved(config) {
      root = config.root;
      outDir = path.resolve(config.root, config.build.outDir);
    },
    buildStart() {
      inputs = buildInputsHash(root);
    },
    closeBundle() {
      writeFileSync(path.join(outDir, BUILD_STAMP), `${inputs}\n`);
    },
  };
}

export default defineConfig({
  plugins: [lazyTooltipUniqueProvider(), react(), precompress(), stampInputs(), signedIn.plugin, firstPagePreload()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    manifest: true,
    chunkSizeWarningLimit: 1500,
    rolldownOptions: {
      experimental: { lazyBarrel: true },
      // @rc-component/form declares no `sideEffects`, and its index assigns the Field, List and hooks onto
      // its Form: so every antd input (whose form context imports only its FormProvider) brought the whole
      // form library and its validator (~14 kB gzip) into the first list screen. Its modules only define
      // things, so what nothing uses may be left out.
      treeshake: {
        moduleSideEffects: [
          { test: /node_modules[\\/]@rc-component[\\/](form|async-validator)[\\/]/, sideEffects: false },
        ],
      },
      output: {
        // React is one vendor chunk every screen shares. antd is not grouped: its components are imported
        // one by one and land in the chunk of the first screen, form or view that needs them, so sign-in
        // and the first list load only what they draw (rjsf/ajv and ECharts stay in their lazy chunks).
        codeSplitting: {
          groups: [
            { name: "react", test: /node_modules[\\/](react|react-dom|scheduler|react-router)[\\/]/, priority: 3 },
            // What the entry imports statically loads on every page anyway: one file, not fifteen (over
            // HTTP/1.1 a browser fetches six at a time, each waiting a round trip).
            { name: "boot", tags: ["$initial"], priority: 2 },
            signedIn.group,
          ],
        },
      },
    },
  },
  server: {
    proxy: { "/graphql": { target: process.env.NODEPLANE_API ?? "http://localhost:8080", changeOrigin: true } },
  },
});
