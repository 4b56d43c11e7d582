/**
 * The stream engine benchmark (`node --import tsx tests/bench/streams.ts`, also run by `npm run bench`).
 * Blocks per second from a local anvil through a trivial filter to a local webhook receiver (the whole
 * engine: read-ahead, QuickJS filter, signed POST, acknowledgement in PostgreSQL), against the raw rate
 * at which the same dataset reader fetches the same blocks with the same batch size; and the filter's
 * cost per block (from the engine's own filter timings). Targets: >= 0.8x the raw read rate, <= 0.1 ms
 * filter overhead per block. BENCH_BLOCKS sets the range length (default 2000).
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { buildApp } from "../../server/app.ts";
import { startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { EvmDatasetReader } from "../../server/dataplane/datasets/reader.ts";
import { startStreamEngine } from "../../server/dataplane/engine/index.ts";
import { createStream } from "../../server/domains/streams/service.ts";
import { loadConfig } from "../../server/platform/config.ts";
import { secretBox } from "../../server/platform/secrets.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 2000);
const NETWORK = "ethereum-mainnet";

export interface StreamBenchRow {
  batchSize: number;
  rawBlocksPerSec: number;
  engineBlocksPerSec: number;
  ratio: number;
  filterMsPerBlock: number;
}

export async function runStreamBench(): Promise<StreamBenchRow[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "nodeplane-bench-streams-"));
  // The embedded PostgreSQL runs as its own user, which must reach its data directory inside.
  chmodSync(dataDir, 0o755);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: "test",
    PORT: "0",
    NODEPLANE_DATA_DIR: dataDir,
    LOG_LEVEL: "error",
  });
  const app = await buildApp(config);
  // Clients left idle when the embedded server stops at the end must not crash the run.
  app.db.$client.on("error", () => {});
  const anvil = await startAnvil({ chainId: 1 });
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as { port: number }).port;
  const rows: StreamBenchRow[] = [];
  try {
    await fetch(anvil.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: [`0x${BLOCKS.toString(16)}`] }),
    });
    const [{ id: accountId }] = (await app.db.execute(sql`select id from accounts limit 1`)).rows as { id: string }[];
    const engine = startStreamEngine({
      db: app.db,
      log: app.log,
      config,
      upstreams: staticUpstreams([
        { network: NETWORK, chainId: 1, httpUrl: anvil.httpUrl, wsUrl: null, source: "local" },
      ]),
      pollMs: 20,
      tipPollMs: 20,
      metricsFlushMs: 0,
    });
    for (const batchSize of [1, 10]) {
      const reader = new EvmDatasetReader(anvil.httpUrl);
      await reader.fetchBatch("BLOCK", 1, batchSize); // warm the connection
      let t = performance.now();
      for (let n = 1; n <= BLOCKS; n += batchSize)
        await reader.fetchBatch("BLOCK", n, Math.min(BLOCKS, n + batchSize - 1));
      const rawSec = (performance.now() - t) / 1000;
      await reader.close();

      const before = received;
      t = performance.now();
      const stream = await createStream(
        app.db,
        secretBox(config),
        accountId,
        {
          name: `bench ${batchSize}`,
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: `http://127.0.0.1:${port}/`, securityToken: "bench-token" },
          startRange: 1,
          endRange: BLOCKS,
          datasetBatchSize: batchSize,
          filterFunction: "function main(stream) { return stream.data; }",
          status: "ACTIVE",
        },
        "STREAM",
      );
      engine.wake();
      while (true) {
        const r = (await app.db.execute(sql`select status from streams where id = ${stream.id}`)).rows[0] as {
          status: string;
        };
        if (r.status !== "ACTIVE") break;
        await new Promise((res) => setTimeout(res, 5));
      }
      const engineSec = (performance.now() - t) / 1000;
      await engine.flushMetrics();
      const m = (
        await app.db.execute(
          sql`select sum(filter_ms_total)::float8 as ms, sum(blocks)::float8 as blocks from stream_metric_minutes where stream_id = ${stream.id}`,
        )
      ).rows[0] as { ms: number; blocks: number };
      if (received - before !== Math.ceil(BLOCKS / batchSize))
        throw new Error(`expected ${Math.ceil(BLOCKS / batchSize)} deliveries, got ${received - before}`);
      rows.push({
        batchSize,
        rawBlocksPerSec: BLOCKS / rawSec,
        engineBlocksPerSec: BLOCKS / engineSec,
        ratio: rawSec / engineSec,
        filterMsPerBlock: m.ms / m.blocks,
      });
    }
    await engine.stop();
  } finally {
    receiver.close();
    await anvil.stop();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await runStreamBench();
  console.log(`streams: ${BLOCKS} blocks of anvil, dataset BLOCK, trivial filter, signed webhook to a local receiver`);
  for (const r of rows) {
    console.log(
      `  batch ${String(r.batchSize).padStart(2)}: raw read ${r.rawBlocksPerSec.toFixed(0)} blocks/s, engine ${r.engineBlocksPerSec.toFixed(0)} blocks/s = ${r.ratio.toFixed(2)}x (target >= 0.8x); filter ${r.filterMsPerBlock.toFixed(4)} ms/block (target <= 0.1)`,
    );
  }
  process.exit(0);
}
