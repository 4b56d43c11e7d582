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

export async function runMigrations(db: Db): Promise<void> {
  await migrate(db, { migrationsFolder: path.resolve(import.meta.dirname, "../migrations") });
}
