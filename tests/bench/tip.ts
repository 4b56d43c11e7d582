/**
 * The chain-tip benchmark (`npm run bench -- tip`, or `node --no-node-snapshot --import tsx tests/bench/tip.ts`):
 * how long from a block's first appearance on the node to the webhook's answer, for a stream at the tip
 * (dataset BLOCK, batch 1, the pass-through filter, a signed webhook on loopback), with a node mining a
 * block a second. Target (issue 18): p50 ≤ 100 ms, p99 ≤ 500 ms.
 *
 * Times are taken in a process of their own (tests/bench/tip-clock.ts): it mines each block (evm_mine, one
 * at a seeded random moment within each second; a block cannot appear before the request is sent, so the
 * figure is an upper bound), receives the webhook, and holds a plain WebSocket subscription to the node's
 * newHeads. The pushed part runs the stream as `npm start` does: in the service's engine child process
 * (supervised, filters on its thread), woken by the activation. Beside the engine the bench prints, from the same blocks, the time for the node's notification to reach that plain client
 * (the floor for learning of blocks by push), and in a second part the same pipeline with the engine polling
 * the node (no WebSocket URL; the engine's default tip poll of 1 s; an engine in this process, the child
 * stopped), which is how the engine learned of blocks before.
 *
 * BENCH_TIP_BLOCKS blocks are measured with pushed heads (default 60), BENCH_TIP_POLL_BLOCKS with polling
 * (default 20), each after WARM_UP_BLOCKS blocks that are not (the runner's start, the JIT).
 */
import { type ChildProcess, fork } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { buildApp } from "../../server/app.ts";
import { startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { startStreamEngine } from "../../server/dataplane/engine/index.ts";
import { functionInvoker } from "../../server/domains/functions/invoker.ts";
import { FunctionRuns } from "../../server/domains/functions/service.ts";
import { kvFilterHelpers } from "../../server/domains/kv/filter-helpers.ts";
import { engineStore } from "../../server/domains/streams/engine-store.ts";
import { createStream, deleteStream } from "../../server/domains/streams/service.ts";
import { loadConfig } from "../../server/platform/config.ts";
import { secretBox } from "../../server/platform/secrets.ts";
import { TEST_EGRESS_ALLOW, testEgress } from "../support/egress.ts";
import { setEnvForBench } from "./env.ts";
import type { MinedBlock } from "./tip-clock.ts";

const PUSH_BLOCKS = Number(process.env.BENCH_TIP_BLOCKS ?? 60);
const POLL_BLOCKS = Number(process.env.BENCH_TIP_POLL_BLOCKS ?? 20);
const WARM_UP_BLOCKS = 5;
const BLOCK_MS = 1000;
/** The engine's default (see StreamEngineDeps.tipPollMs). */
const TIP_POLL_MS = 1000;
const NETWORK = "ethereum-mainnet";
const FILTER = "function main(stream) { return stream.data; }";
export const TIP_TARGET = { p50: 100, p99: 500 };

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  count: number;
}

export interface TipBenchResult {
  /** Mined → webhook answered, the engine woken by pushed heads. */
  pushed: Percentiles;
  /** Mined → the node's newHeads notification at a plain WebSocket client (same blocks). */
  plainClient: Percentiles;
  /** Mined → webhook answered, the engine polling the node. */
  polling: Percentiles;
  /** Blocks the webhook never received in the measured runs (should be 0). */
  missing: number;
}

/** Nearest-rank percentiles. */
function percentiles(xs: number[]): Percentiles {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  return { p50: at(50), p90: at(90), p99: at(99), count: sorted.length };
}

const show = (p: Percentiles) =>
  `p50 ${p.p50.toFixed(1)} ms, p90 ${p.p90.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (${p.count} blocks)`;

class Clock {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(httpUrl: string): Promise<Clock> {
    const child = fork(new URL("./tip-clock.ts", import.meta.url), [httpUrl], { execArgv: ["--import", "tsx"] });
    const port = await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`the tip clock exited (${code})`)));
      child.once("message", (m: { type: string; port: number }) => resolve(m.port));
    });
    child.removeAllListeners("exit");
    return new Clock(child, port);
  }

  mine(count: number): Promise<MinedBlock[]> {
    return new Promise((resolve) => {
      this.child.once("message", (m: { type: "mined"; blocks: MinedBlock[] }) => resolve(m.blocks));
      this.child.send({ type: "mine", count, intervalMs: BLOCK_MS });
    });
  }

  stop(): void {
    this.child.disconnect();
  }
}

export async function runTipBench(log: (line: string) => void = console.log): Promise<TipBenchResult> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "nodeplane-bench-tip-"));
  // The embedded PostgreSQL runs as its own user, which must reach its data directory inside.
  chmodSync(dataDir, 0o755);
  const anvil = await startAnvil({ chainId: 1 });
  const networks = path.join(dataDir, "networks.json");
  writeFileSync(
    networks,
    JSON.stringify({ local: { networks: [] }, upstreams: { [NETWORK]: { http: anvil.httpUrl, ws: anvil.wsUrl } } }),
  );
  // The chain nodes are read from this process's environment.
  const restoreNetworks = setEnvForBench("NODEPLANE_NETWORKS_CONFIG", networks);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: "test",
    PORT: "0",
    NODEPLANE_DATA_DIR: dataDir,
    NODEPLANE_EGRESS_ALLOW: TEST_EGRESS_ALLOW,
    // As `npm start` runs it: the engine in its supervised process, filters on its thread.
    NODEPLANE_ENGINE_PROCESS: "child",
    LOG_LEVEL: "error",
  });
  const app = await buildApp(config);
  await app.app.listen({ port: 0, host: "127.0.0.1" });
  const clock = await Clock.start(anvil.httpUrl);
  try {
    const db = app.db;
    db.$client.on("error", () => {});
    const [{ id: accountId }] = (await db.execute(sql`select id from accounts limit 1`)).rows as { id: string }[];
    let missing = 0;
    /**
     * One stream at the tip through the service's engine child, which reaches the node's WebSocket (wsUrl
     * given), or through an engine in this process that polls the node (null; the child stopped).
     */
    const measure = async (wsUrl: string | null, blocks: number) => {
      const engine = wsUrl
        ? { wake: app.services.streams.wake, stop: async () => {} }
        : startStreamEngine({
            db,
            store: engineStore,
            destinationDeps: {
              egress: testEgress,
              functionInvoker: functionInvoker(db, new FunctionRuns(kvFilterHelpers(db))),
            },
            log: app.log,
            config,
            upstreams: staticUpstreams([
              { network: NETWORK, chainId: 1, httpUrl: anvil.httpUrl, wsUrl, source: "local" },
            ]),
            pollMs: 100,
            tipPollMs: TIP_POLL_MS,
          });
      const tip = Number.parseInt(
        (
          (await (
            await fetch(anvil.httpUrl, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
            })
          ).json()) as { result: string }
        ).result,
        16,
      );
      const stream = await createStream(
        db,
        secretBox(config),
        accountId,
        {
          name: `tip ${wsUrl ? "pushed" : "polling"}`,
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: `http://127.0.0.1:${clock.port}/`, securityToken: "bench-token" },
          startRange: tip + 1,
          datasetBatchSize: 1,
          filterFunction: FILTER,
          status: "ACTIVE",
        },
        "STREAM",
        app.services,
      );
      engine.wake();
      const mined = (await clock.mine(WARM_UP_BLOCKS + blocks)).slice(WARM_UP_BLOCKS);
      await deleteStream(db, accountId, stream.id, "STREAM");
      await engine.stop();
      missing += mined.filter((b) => b.answeredAt === null).length;
      const answered = mined.filter((b) => b.answeredAt !== null);
      return {
        engine: percentiles(answered.map((b) => (b.answeredAt as number) - b.minedAt)),
        plainClient: percentiles(mined.filter((b) => b.headAt !== null).map((b) => (b.headAt as number) - b.minedAt)),
      };
    };
    const pushed = await measure(anvil.wsUrl, PUSH_BLOCKS);
    log(`  pushed heads:  mined → webhook answered ${show(pushed.engine)}`);
    log(`                 mined → newHeads at a plain WebSocket client ${show(pushed.plainClient)}`);
    log(
      `                 against the target: p50 ${(pushed.engine.p50 / TIP_TARGET.p50).toFixed(2)}× of ${TIP_TARGET.p50} ms, p99 ${(pushed.engine.p99 / TIP_TARGET.p99).toFixed(2)}× of ${TIP_TARGET.p99} ms; beyond the plain client: p50 +${(pushed.engine.p50 - pushed.plainClient.p50).toFixed(1)} ms`,
    );
    await app.engineChild()?.stop();
    const polling = await measure(null, POLL_BLOCKS);
    log(`  polling every ${TIP_POLL_MS} ms (no WebSocket): mined → webhook answered ${show(polling.engine)}`);
    log(`  pushed p50 is ${(polling.engine.p50 / pushed.engine.p50).toFixed(1)}× shorter than polling's`);
    if (missing > 0) log(`  ${missing} measured blocks never reached the webhook`);
    return { pushed: pushed.engine, plainClient: pushed.plainClient, polling: polling.engine, missing };
  } finally {
    clock.stop();
    const ignore = (e: unknown) => log(`  (ignored during shutdown: ${(e as Error).message})`);
    process.on("uncaughtException", ignore);
    await app.close();
    await new Promise((r) => setTimeout(r, 200));
    process.off("uncaughtException", ignore);
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
    restoreNetworks();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(
    `tip: anvil mining a block a second → stream at the tip (BLOCK, batch 1, \`${FILTER}\`) → signed webhook`,
  );
  await runTipBench();
  process.exit(0);
}
