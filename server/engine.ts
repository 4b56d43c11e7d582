/**
 * The delivery engine as its own process (`node --import tsx server/engine.ts`): for
 * running engines beside the API process, or several on one database (leases keep each stream on one).
 * Uses DATABASE_URL, NODEPLANE_DATA_DIR (the secrets key), the networks config (upstreams; local anvil
 * nodes only with NODEPLANE_ENGINE_LOCAL_NODES=1), SMTP_URL, NODEPLANE_LEASE_TTL_MS, NODEPLANE_ENGINE_POLL_MS.
 */
import { startChainNodes } from "./dataplane/chain/nodes.ts";
import { startStreamEngine } from "./dataplane/engine/index.ts";
import { functionInvoker } from "./domains/functions/invoker.ts";
import { engineStore } from "./domains/streams/engine-store.ts";
import { loadConfig } from "./platform/config.ts";
import { openDatabase } from "./platform/db/index.ts";
import { EgressPolicy } from "./platform/egress.ts";
import { createLogger } from "./platform/logger.ts";
import { createMailer } from "./platform/mail.ts";

const config = loadConfig(process.env, process.argv);
if (!config.databaseUrl) throw new Error("DATABASE_URL is required to run the engine on its own");
const log = createLogger(config.logLevel);
const db = openDatabase(config.databaseUrl);
const nodes = await startChainNodes(config, { startLocal: process.env.NODEPLANE_ENGINE_LOCAL_NODES === "1" });
const pollMs = Number(process.env.NODEPLANE_ENGINE_POLL_MS ?? 1000);
const engine = startStreamEngine({
  db,
  store: engineStore,
  destinationDeps: {
    // Not to the local chain nodes this process started, nor private addresses the operator did not allow.
    egress: new EgressPolicy({
      allow: config.egressAllow,
      ownPorts: nodes
        .list()
        .filter((u) => u.source === "local")
        .map((u) => Number(new URL(u.httpUrl).port)),
    }),
    functionInvoker: functionInvoker(db),
  },
  log,
  config,
  upstreams: nodes,
  mailer: createMailer(db, { smtpUrl: process.env.SMTP_URL, log }),
  leaseTtlMs: Number(process.env.NODEPLANE_LEASE_TTL_MS ?? 15_000),
  pollMs,
  tipPollMs: pollMs,
  metricsFlushMs: 1000,
});
log.info({ owner: engine.ownerId }, "stream engine started");

const shutdown = async () => {
  await engine.stop();
  await nodes.stop();
  await db.$client.end();
  process.exit(0);
};
process.once("SIGTERM", shutdown);
process.once("SIGINT", shutdown);
