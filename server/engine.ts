/**
 * The delivery engine as a process of its own. Two ways to run it:
 * - As the service's engine child (how `npm start` runs it): the API process starts it, supervised
 *   (platform/supervisor.ts), and passes what it needs in ENGINE_CHILD_ENV (see engineChildEnv in app.ts):
 *   the database, the chain nodes it started, its own ports for the egress policy. It restarts this
 *   process when it dies, and this process exits when the service is gone.
 * - On its own (`node --no-node-snapshot --import tsx server/engine.ts`), beside API processes or several
 *   on one database (leases keep each stream on one): DATABASE_URL, NODEPLANE_DATA_DIR (the secrets key),
 *   the networks config (upstreams; local anvil nodes only with NODEPLANE_ENGINE_LOCAL_NODES=1), SMTP_URL,
 *   NODEPLANE_EGRESS_ALLOW, NODEPLANE_LEASE_TTL_MS, NODEPLANE_ENGINE_POLL_MS.
 *
 * Either way this process serves neither GraphQL nor the RPC proxy, so filters run on its thread
 * (InThreadSandbox): no process round trip per batch. Functions (FUNCTION destinations) still run in the
 * sandbox process, whose slow lane runs their long limits without blocking this loop.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { type ChainNodes, startChainNodes, staticUpstreams, type Upstream } from "./dataplane/chain/nodes.ts";
import { startStreamEngine } from "./dataplane/engine/index.ts";
import { SandboxSuspects } from "./dataplane/engine/suspects.ts";
import { logSandboxLaunch } from "./dataplane/sandbox/confine.ts";
import { InThreadSandbox, logInThreadMemory, takeLostFilter } from "./dataplane/sandbox/in-thread.ts";
import { logSandboxTo, runFiltersOn } from "./dataplane/sandbox/process.ts";
import { FunctionRuns } from "./domains/functions/service.ts";
import { INSPECT_PATH } from "./domains/inspector/service.ts";
import { kvFilterHelpers } from "./domains/kv/filter-helpers.ts";
import { engineStore } from "./domains/streams/engine-store.ts";
import { enginePorts } from "./engine-ports.ts";
import { loadConfig } from "./platform/config.ts";
import { openDatabase } from "./platform/db/index.ts";
import { EgressPolicy } from "./platform/egress.ts";
import { createLogger } from "./platform/logger.ts";
import { createMailer } from "./platform/mail.ts";
import { answerSupervisor, RESTARTED_AFTER_ENV } from "./platform/supervisor.ts";

/** What the service tells its engine child (environment variables, JSON). */
export interface EngineChildEnv {
  /** The chain nodes the service reads blocks from (its local anvil nodes included). */
  NODEPLANE_ENGINE_UPSTREAMS: string;
  /** Ports of the service itself (HTTP, embedded database, local nodes): the egress policy refuses them. */
  NODEPLANE_ENGINE_OWN_PORTS: string;
  /** The service's own origins: destinations may reach its request inspector there (and nothing else of it). */
  NODEPLANE_ENGINE_OWN_ORIGINS: string;
  /** The prefix of this child's lease owner id; a restarted child reclaims its predecessor's leases. */
  NODEPLANE_ENGINE_OWNER: string;
}

const config = loadConfig(process.env, process.argv);
if (!config.databaseUrl) throw new Error("DATABASE_URL is required to run the engine on its own");
const log = createLogger(config.logLevel);
const db = openDatabase(config.databaseUrl);
const child = process.env as Partial<EngineChildEnv>;
const nodes: ChainNodes = child.NODEPLANE_ENGINE_UPSTREAMS
  ? staticUpstreams(JSON.parse(child.NODEPLANE_ENGINE_UPSTREAMS) as Upstream[])
  : await startChainNodes(config, { startLocal: process.env.NODEPLANE_ENGINE_LOCAL_NODES === "1" });
const ownPorts: number[] = child.NODEPLANE_ENGINE_OWN_PORTS
  ? (JSON.parse(child.NODEPLANE_ENGINE_OWN_PORTS) as number[])
  : nodes
      .list()
      .filter((u) => u.source === "local")
      .map((u) => Number(new URL(u.httpUrl).port));
// An isolate V8 lost control of ends this engine: V8 says so, or it holds this thread and the in-thread
// sandbox's watch kills the process past the call's limit (see in-thread.ts). Either way the filter's
// stream is named in the lost file; the successor remembers it and its account as suspects (in a file,
// for later engines too, see suspects.ts) and runs their filters in the sandbox process, where crashing
// it again pauses the stream (runner.ts). Ended another way with no culprit named (killed for silence,
// by the kernel), the successor cannot tell which filter did it, so for CAREFUL_MS it runs every filter
// created meanwhile in the sandbox process.
const ownerHash = createHash("sha256")
  .update(child.NODEPLANE_ENGINE_OWNER ?? "standalone")
  .digest("hex")
  .slice(0, 16);
const lostFile = path.join(config.dataDir, `engine-lost-${ownerHash}.json`);
const lost = takeLostFilter(lostFile);
// Stream filters are labelled "stream <id>" (runner.ts).
const lostStream = lost?.label ? /^stream (.+)$/.exec(lost.label)?.[1] : undefined;
const suspects = SandboxSuspects.load(path.join(config.dataDir, `engine-suspects-${ownerHash}.json`));
const lostRow = lost && lostStream ? await engineStore.loadStream(db, lostStream) : undefined;
if (lost && lostRow) suspects.add(lostRow, lost.reason);
logSandboxTo(log);
// Functions of FUNCTION destinations run in sandbox processes started from this process.
logSandboxLaunch(log).catch((error) => log.warn({ err: error }, "the sandbox launch was not tried"));
const inThread = new InThreadSandbox((message) => {
  log.fatal({ message }, "V8 lost control of a filter's isolate; the engine exits");
  process.exit(70);
}, lostFile);
logInThreadMemory(log);
const CAREFUL_MS = 10 * 60_000;
const restartedAfter = process.env[RESTARTED_AFTER_ENV];
if (lost && lostStream) {
  log.warn(
    { restartedAfter, streamId: lostStream, accountId: lostRow?.accountId, reason: lost.reason },
    "a stream's filter ended the previous engine; its filter and its account's run in the sandbox process",
  );
  runFiltersOn(inThread);
} else if (restartedAfter && restartedAfter !== "exit code 0") {
  log.warn({ restartedAfter }, `filters run in the sandbox process for ${CAREFUL_MS / 60_000} minutes`);
  setTimeout(() => runFiltersOn(inThread), CAREFUL_MS).unref();
} else runFiltersOn(inThread);
const pollMs = Number(process.env.NODEPLANE_ENGINE_POLL_MS ?? 1000);
// Destinations connect neither to the service's own ports nor to private addresses the operator did not
// allow, except to the service's request inspector on its own origins.
const egress = new EgressPolicy({ allow: config.egressAllow, ownPorts });
if (child.NODEPLANE_ENGINE_OWN_ORIGINS)
  egress.allowOwnRoute({ origins: JSON.parse(child.NODEPLANE_ENGINE_OWN_ORIGINS) as string[], path: INSPECT_PATH });
const engine = startStreamEngine({
  db,
  ...enginePorts(db, egress, new FunctionRuns(kvFilterHelpers(db))),
  sandboxSuspects: suspects,
  log,
  config,
  upstreams: nodes,
  mailer: createMailer(db, { smtpUrl: config.smtpUrl, log }),
  ...(child.NODEPLANE_ENGINE_OWNER
    ? { ownerId: `${child.NODEPLANE_ENGINE_OWNER}:${process.pid}`, reclaimPrefix: child.NODEPLANE_ENGINE_OWNER }
    : {}),
  leaseTtlMs: Number(process.env.NODEPLANE_LEASE_TTL_MS ?? 15_000),
  pollMs,
  tipPollMs: pollMs,
  metricsFlushMs: 1000,
});
log.info({ owner: engine.ownerId }, "stream engine started");

/**
 * A stop that cannot finish must not keep this process alive: with the service gone (its database maybe
 * gone too) nothing else ends it. Engine children of killed services were found still running an hour on.
 */
const STOP_DEADLINE_MS = 10_000;
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    log.error(`the engine did not stop within ${STOP_DEADLINE_MS} ms; exiting`);
    process.exit(1);
  }, STOP_DEADLINE_MS).unref();
  try {
    await engine.stop();
    await nodes.stop();
    await db.$client.end();
  } catch (e) {
    log.error({ err: e }, "the engine could not stop cleanly; exiting");
    process.exit(1);
  }
  process.exit(0);
};
process.once("SIGTERM", shutdown);
// The service's activations reach the engine at once; the service gone (even killed), so is its engine.
const supervised = answerSupervisor(
  (message) => {
    if (message.op === "wake") engine.wake();
  },
  () => void shutdown(),
);
// Ctrl-C reaches the whole terminal's process group: a supervised engine is stopped by its service.
process.on("SIGINT", () => {
  if (!supervised) void shutdown();
});
