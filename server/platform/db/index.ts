import { readFileSync } from "node:fs";
import path from "node:path";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";

export type Db = NodePgDatabase & { $client: pg.Pool };
/** A transaction handle; store functions accept either. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type Executor = Db | Tx;

export function openDatabase(url: string, max = 10, onIdleError?: (error: Error) => void): Db {
  const pool = new pg.Pool({ connectionString: url, max });
  // An idle connection the server drops (a restart, an administrator) is replaced on the next
  // query; without a listener its error would end the process.
  pool.on("error", (error) => onIdleError?.(error));
  return drizzle(pool) as Db;
}

const MIGRATIONS_FOLDER = path.resolve(import.meta.dirname, "../migrations");

export async function runMigrations(db: Db): Promise<void> {
  if (await migrationsApplied(db)) return;
  await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
}

/**
 * Whether drizzle's migrate would apply nothing, by its own rule (a migration runs when it is newer than the
 * last one applied), in one query: a restart skips migrate's five statements and its reading and hashing of
 * every migration file.
 */
async function migrationsApplied(db: Db): Promise<boolean> {
  const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as {
    entries: { when: number }[];
  };
  const newest = Math.max(...journal.entries.map((entry) => entry.when));
  try {
    const { rows } = await db.$client.query<{ newest: string | null }>(
      "select max(created_at) as newest from drizzle.__drizzle_migrations",
    );
    return rows[0]?.newest != null && Number(rows[0].newest) >= newest;
  } catch (error) {
    // A new database: no migrations table yet.
    if ((error as { code?: string }).code === "42P01" || (error as { code?: string }).code === "3F000") return false;
    throw error;
  }
}
