// What a start needs before its database server starts: the app (app.ts and its packages, most of a
// start's loading) is imported only after that, so PostgreSQL and the chain nodes start while it loads.
import { startOwnServers } from "./own-servers.ts";
import { loadConfig } from "./platform/config.ts";
import { buildStaleness, startBuilding } from "./platform/console-build.ts";
import { createLogger } from "./platform/logger.ts";
import { ensureServerBuilt, serverBuildStaleness } from "./platform/server-build.mjs";
import { type ServiceLock, ServiceLockHeld, takeServiceLockAfterStopping } from "./platform/service-lock.ts";
import { othersServing, registerServing } from "./platform/serving.ts";
import { traceStart } from "./platform/start-trace.ts";

traceStart("the start's first modules loaded");

const args = process.argv.slice(2);
// The stream engine runs in a supervised process of its own unless told otherwise (see AppConfig).
const config = loadConfig({ NODEPLANE_ENGINE_PROCESS: "child", ...process.env }, args);

/** How long a start waits for a service that is stopping on its data directory to end. */
const STOPPING_WAIT_MS = 30_000;
// The service that runs the embedded PostgreSQL server owns the data directory; with an external database
// the directory holds only the secrets key, which processes split by role share.
let lock: ServiceLock | null = null;
if (!config.databaseUrl) {
  try {
    lock = await takeServiceLockAfterStopping(config.dataDir, STOPPING_WAIT_MS);
  } catch (error) {
    if (error instanceof ServiceLockHeld) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const held = lock;
  process.on("exit", () => held.release());
}

// `npm start` passes --build: the console and the service's bundle (server/start.mjs runs it) are rebuilt
// when stale, only once this start owns the data directory, and never under another service running from
// this checkout (with another data directory): it serves dist/ and restarts its engine from dist-server/.
let consoleBuild: ReturnType<typeof startBuilding> | null = null;
if (args.includes("--build") && !config.dev) {
  // Each build's inputs hashed once here (a restart finds both current and builds nothing).
  const consoleStale = buildStaleness(config.rootDir);
  const serverStale = serverBuildStaleness(config.rootDir);
  const stale = consoleStale ?? serverStale;
  const running = stale ? othersServing(config.rootDir) : [];
  if (stale && running.length > 0) {
    const other = running[0];
    console.error(
      `Not rebuilding (${stale}): the service pid ${other.pid}${other.port ? ` (port ${other.port})` : ""}, data directory ${other.dataDir}, runs from this checkout and serves its build. Stop it first, or start this one from a checkout of its own.`,
    );
    process.exit(1);
  }
  // The console builds in a process of its own while this one starts the database, migrates and seeds;
  // the service serves it, and answers, once it is built.
  if (consoleStale) {
    const building = startBuilding(config.rootDir);
    consoleBuild = building;
    building.built.catch(() => undefined);
    process.on("exit", () => building.stop());
  }
  if (serverStale) await ensureServerBuilt(config.rootDir);
}
const serving = config.dev ? null : registerServing(config.rootDir, config.dataDir);

const log = createLogger(config.logLevel);
const servers = startOwnServers(config, log);
// The app's import is one long synchronous compile and run of its chunk: the database server is spawned first.
await servers.databaseSpawning;
traceStart("database server and chain nodes starting");
const [{ buildApp }, { RegistryError }] = await Promise.all([
  import("./app.ts"),
  import("./registry/registry.ts"),
]).catch(async (error) => {
  await servers.stop();
  throw error;
});
traceStart("the app's modules loaded");

let app: Awaited<ReturnType<typeof buildApp>>;
try {
  app = await buildApp(config, { consoleBuilt: consoleBuild?.built, started: { log, servers } });
} catch (error) {
  if (error instanceof RegistryError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const address = await app.app.listen({ port: config.port, host: config.host });
traceStart("listening");
const listening = app.app.server.address();
if (listening && typeof listening === "object") {
  lock?.recordPort(listening.port);
  serving?.recordPort(listening.port);
}
const url = config.publicUrl ?? address.replace("127.0.0.1", "localhost");
const { demoEmail, demoPassword, passwordCreated } = app.firstStart;
console.log(`
Nodeplane is running at ${url}
Sign in as ${demoEmail} (owner) or viewer@nodeplane.local (viewer)
Password: ${demoPassword}${passwordCreated ? "   (generated now; kept in the data directory)" : ""}
`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "stopping");
    lock?.recordStopping();
    app
      .close()
      .then(() => process.exit(0))
      .catch((error) => {
        app.log.error({ err: error }, "stopping failed");
        process.exit(1);
      });
  });
}
