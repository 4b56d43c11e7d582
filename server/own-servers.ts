import path from "node:path";
import type { Logger } from "pino";
import { type ChainNodes, startChainNodes } from "./dataplane/chain/nodes.ts";
import type { AppConfig } from "./platform/config.ts";
import { type DatabaseServer, startDatabaseServer } from "./platform/db/postgres.ts";

/**
 * The processes the service runs beside itself: its database server (embedded, unless DATABASE_URL names
 * one) and the local chain nodes. They start while the service loads, checks its registry, migrates and
 * seeds, instead of one after another; `npm start` starts them before the app's modules load (main.ts).
 */
export interface OwnServers {
  database: Promise<DatabaseServer>;
  chains: Promise<ChainNodes>;
  /**
   * Settles once the database server's process is spawned (or its start has a longer way to go): main.ts
   * waits for it before the app's import, a long synchronous step that would hold the spawn behind it.
   */
  databaseSpawning: Promise<void>;
  /** Stops what started, once both have settled (a start that failed part-way). */
  stop(): Promise<void>;
}

export function startOwnServers(config: AppConfig, log: Logger): OwnServers {
  let spawning: () => void = () => undefined;
  const databaseSpawning = new Promise<void>((resolve) => {
    spawning = resolve;
  });
  const database = startDatabaseServer(config, log, spawning);
  // A start that failed before the spawn: the failure is the database's to report, where it is awaited.
  database.then(spawning, spawning);
  const chains = startChainNodes(config, {
    archiveNodes: config.archiveNodes,
    log: (message) => log.info(message),
    stateDir: path.join(config.dataDir, "chains"),
  });
  // Each is awaited where it is needed; a failure before then is handled there, not as unhandled.
  database.catch(() => undefined);
  chains.catch(() => undefined);
  return {
    database,
    chains,
    databaseSpawning,
    async stop() {
      const [db, chainNodes] = await Promise.allSettled([database, chains]);
      if (chainNodes.status === "fulfilled") await chainNodes.value.stop().catch(() => undefined);
      if (db.status === "fulfilled") await db.value.stop().catch(() => undefined);
    },
  };
}
