import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { startStreamEngine } from "../../server/dataplane/engine/index.ts";
import { MAX_UNRECORDED_BATCHES } from "../../server/dataplane/engine/recorder.ts";
import { functionInvoker } from "../../server/domains/functions/invoker.ts";
import { FunctionRuns } from "../../server/domains/functions/service.ts";
import { kvFilterHelpers } from "../../server/domains/kv/filter-helpers.ts";
import { engineStore, KEPT_HASHES } from "../../server/domains/streams/engine-store.ts";
import type { TestUser } from "../support/api.ts";
import { TEST_EGRESS_ALLOW, testEgress } from "../support/egress.ts";
import {
  blockNumbers,
  NETWORK,
  type StreamsTestApp,
  startReceiver,
  startStreamsAppAsOwner,
  waitFor,
} from "./streams-harness.ts";

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  // No engine in the service: each test runs its own (in this process or as child processes).
  ({ t, owner } = await startStreamsAppAsOwner({ engine: false, blocks: 20 }));
});
afterAll(async () => {
  await t?.close();
});

async function createStream(input: Record<string, unknown>): Promise<string> {
  const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
    "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
    {
      input: {
        name: "durable",
        network: NETWORK,
        dataset: "BLOCK",
        destination: "WEBHOOK",
        startRange: 1,
        datasetBatchSize: 3,
        status: "ACTIVE",
        ...input,
      },
    },
  );
  return createStream.id;
}

const statusOf = async (id: string) =>
  (await owner.client.gqlOk<{ stream: { status: string } }>("query($id: ID!) { stream(id: $id) { status } }", { id }))
    .stream.status;

function engineProcess(): ChildProcess {
  const networks = join(t.dataDir, "networks.json");
  writeFileSync(
    networks,
    JSON.stringify({ local: { networks: [] }, upstreams: { [NETWORK]: { http: t.anvil.httpUrl } } }),
  );
  return spawn(process.execPath, ["--import", "tsx", "server/engine.ts"], {
    env: {
      ...process.env,
      DATABASE_URL: t.database.url,
      NODEPLANE_DATA_DIR: t.dataDir,
      NODEPLANE_NETWORKS_CONFIG: networks,
      NODEPLANE_LEASE_TTL_MS: "2000",
      NODEPLANE_ENGINE_POLL_MS: "100",
      NODEPLANE_EGRESS_ALLOW: TEST_EGRESS_ALLOW,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

/** A stream engine in this process, reading from `httpUrl` (anvil unless a test puts something between). */
async function engineHere(options: { httpUrl?: string } & Partial<Parameters<typeof startStreamEngine>[0]> = {}) {
  const { httpUrl = t.anvil.httpUrl, ...rest } = options;
  return startStreamEngine({
    db: t.db,
    store: engineStore,
    destinationDeps: {
      egress: testEgress,
      functionInvoker: functionInvoker(t.db, new FunctionRuns(kvFilterHelpers(t.db))),
    },
    log: (await import("pino")).pino({ level: "silent" }),
    config: { dataDir: t.dataDir },
    upstreams: staticUpstreams([{ network: NETWORK, chainId: 1, httpUrl, wsUrl: null, source: "local" }]),
    leaseTtlMs: 2000,
    pollMs: 50,
    tipPollMs: 50,
    metricsFlushMs: 0,
    ...rest,
  });
}

describe("durability", () => {
  it("after the engine process is killed mid-batch and restarted: no gap, only the unacknowledged batch twice", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let sawHeld = false;
    let heldArrived: () => void = () => {};
    const heldSeen = new Promise<void>((r) => {
      heldArrived = r;
    });
    const receiver = await startReceiver(async (r) => {
      if (!sawHeld && blockNumbers(r.json)[0] === 7) {
        sawHeld = true;
        heldArrived();
        await held;
      }
      return 200;
    });
    const first = engineProcess();
    let second: ChildProcess | null = null;
    try {
      const id = await createStream({ destinationAttributes: { url: receiver.url, postTimeoutSec: 60 }, endRange: 12 });
      await heldSeen;
      // The record of [4, 5, 6] overlaps the delivery of [7, 8, 9] (the engine's pipeline); once it has
      // committed, exactly one delivered batch is unrecorded. (Killed before that, the engine would
      // send both again: its documented window is two batches.)
      await waitFor("the checkpoint at 7", async () => {
        const r = await t.db.$client.query("select next_block from stream_checkpoints where stream_id = $1", [id]);
        return Number(r.rows[0]?.next_block) === 7;
      });
      first.kill("SIGKILL");
      await new Promise((r) => first.once("exit", r));
      release();
      second = engineProcess();
      await waitFor("completion", async () => (await statusOf(id)) === "COMPLETED", 60_000);
      const batches = receiver.received.map((r) => blockNumbers(r.json));
      expect(batches).toEqual([
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 9], // sent by the killed process, never acknowledged
        [7, 8, 9],
        [10, 11, 12],
      ]);
    } finally {
      first.kill("SIGKILL");
      second?.kill("SIGTERM");
      if (second) await new Promise((r) => second?.once("exit", r));
      await receiver.close();
    }
  }, 90_000);

  it("killed while it delivers faster than its checkpoint is written: no gap, at most MAX_UNRECORDED_BATCHES again", async () => {
    const blocks = 1500;
    await t.rpc("anvil_mine", [`0x${blocks.toString(16)}`]);
    const tip = Number.parseInt(await t.rpc<string>("eth_blockNumber"), 16);
    const first = tip - blocks + 1;
    const engine = engineProcess();
    let second: ChildProcess | null = null;
    // Killed while the receiver holds the 500th delivery: batches of one block, hundreds a second, so
    // several acknowledged batches share each checkpoint write.
    const receiver = await startReceiver((_, index) => {
      if (index === 499) engine.kill("SIGKILL");
      return 200;
    });
    try {
      const id = await createStream({
        destinationAttributes: { url: receiver.url },
        startRange: first,
        endRange: tip,
        datasetBatchSize: 1,
      });
      await new Promise((r) => engine.once("exit", r));
      second = engineProcess();
      await waitFor("completion", async () => (await statusOf(id)) === "COMPLETED", 60_000);
      const seen = receiver.received.map((r) => blockNumbers(r.json)[0]);
      const restarts = seen.flatMap((n, i) => (i > 0 && n !== seen[i - 1] + 1 ? [i] : []));
      expect(restarts).toHaveLength(1);
      const [at] = restarts;
      const again = seen[at - 1] - seen[at] + 1;
      // The held batch was never acknowledged, so it is sent again; so are those acknowledged but
      // not yet recorded, at most MAX_UNRECORDED_BATCHES in all.
      expect(again).toBeGreaterThanOrEqual(1);
      expect(again).toBeLessThanOrEqual(MAX_UNRECORDED_BATCHES);
      expect(seen[0]).toBe(first);
      expect(seen[seen.length - 1]).toBe(tip);
      expect(new Set(seen).size).toBe(blocks);
    } finally {
      engine.kill("SIGKILL");
      second?.kill("SIGTERM");
      if (second) await new Promise((r) => second?.once("exit", r));
      await receiver.close();
    }
  }, 90_000);

  it("never runs one stream in two engines at once", async () => {
    const receiver = await startReceiver(async () => {
      await new Promise((r) => setTimeout(r, 20));
      return 200;
    });
    // Two streams each, so both engines run at once.
    const a = await engineHere({ leaseTtlMs: 1000, ownerId: "engine-a", maxStreams: 2 });
    const b = await engineHere({ leaseTtlMs: 1000, ownerId: "engine-b", maxStreams: 2 });
    try {
      const ids = await Promise.all(
        [1, 2, 3, 4].map(() =>
          createStream({ destinationAttributes: { url: receiver.url }, datasetBatchSize: 1, endRange: 15 }),
        ),
      );
      let overlaps = 0;
      let sawBoth = false;
      await waitFor(
        "all complete",
        async () => {
          const ra = new Set(a.running());
          const rb = b.running();
          if (rb.some((id) => ra.has(id))) overlaps++;
          if (ra.size > 0 && rb.length > 0) sawBoth = true;
          return (await Promise.all(ids.map(statusOf))).every((s) => s === "COMPLETED");
        },
        60_000,
      );
      expect(overlaps).toBe(0);
      expect(sawBoth).toBe(true);
      expect(receiver.received.length).toBe(4 * 15);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await receiver.close();
    }
  }, 90_000);

  it("stops delivering at once when the stream is paused, without waiting for its heartbeat", async () => {
    const receiver = await startReceiver(async () => {
      await new Promise((r) => setTimeout(r, 20));
      return 200;
    });
    // A heartbeat a minute apart: only the streams_changed notification can stop the runner in time.
    const engine = await engineHere({ leaseTtlMs: 180_000, tipPollMs: 60_000 });
    try {
      const id = await createStream({
        destinationAttributes: { url: receiver.url },
        datasetBatchSize: 1,
        endRange: 20,
      });
      await waitFor("deliveries", async () => receiver.received.length >= 2);
      await owner.client.gqlOk("mutation($id: ID!) { pauseStream(id: $id) { status } }", { id });
      await waitFor("the runner stopped", async () => !engine.running().includes(id), 2_000);
      const delivered = receiver.received.length;
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.length).toBe(delivered);
      expect(delivered).toBeLessThan(20);
      expect(await statusOf(id)).toBe("PAUSED");
    } finally {
      await engine.stop();
      await receiver.close();
    }
  });

  it("re-delivers blocks after a reorg made on anvil, marked as reorged", async () => {
    const receiver = await startReceiver();
    const engine = await engineHere();
    try {
      const tip = Number.parseInt(await t.rpc<string>("eth_blockNumber"), 16);
      const snapshot = await t.rpc<string>("evm_snapshot");
      await t.rpc("anvil_mine", ["0x2"]); // tip+1, tip+2 on the old branch
      await createStream({
        destinationAttributes: { url: receiver.url },
        startRange: tip - 1,
        datasetBatchSize: 1,
        fixBlockReorgs: true,
        includeStreamMetadata: "HEADER",
      });
      await waitFor("old branch delivered", async () =>
        receiver.received.some((r) => blockNumbers(r.json)[0] === tip + 2),
      );
      const oldHash = (receiver.received[receiver.received.length - 1].json as { hash: string }[])[0].hash;
      await t.rpc("evm_revert", [snapshot]);
      const block = await t.rpc<{ timestamp: string }>("eth_getBlockByNumber", ["latest", false]);
      await t.rpc("evm_setNextBlockTimestamp", [Number.parseInt(block.timestamp, 16) + 1000]);
      await t.rpc("anvil_mine", ["0x3"]); // tip+1', tip+2', tip+3' on the new branch
      await waitFor("new branch delivered", async () =>
        receiver.received.some((r) => blockNumbers(r.json)[0] === tip + 3),
      );
      const seq = receiver.received.map((r) => [blockNumbers(r.json)[0], r.headers["x-qn-reorg"]]);
      expect(seq).toEqual([
        [tip - 1, "false"],
        [tip, "false"],
        [tip + 1, "false"],
        [tip + 2, "false"],
        [tip + 1, "true"],
        [tip + 2, "true"],
        [tip + 3, "false"],
      ]);
      const newHash = (receiver.received[5].json as { hash: string }[])[0].hash;
      expect(newHash).not.toBe(oldHash);
    } finally {
      await engine.stop();
      await receiver.close();
    }
  }, 60_000);

  it("reads blocks behind the tip several batches per request, and keeps only its last block hashes", async () => {
    const receiver = await startReceiver();
    // Counts the engine's HTTP requests to the node on their way to anvil.
    let nodeRequests = 0;
    const counter = createServer(async (req, res) => {
      nodeRequests++;
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const answer = await fetch(t.anvil.httpUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      res.setHeader("content-type", "application/json");
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((r) => counter.listen(0, "127.0.0.1", r));
    const engine = await engineHere({ httpUrl: `http://127.0.0.1:${(counter.address() as AddressInfo).port}` });
    try {
      const blocks = 400;
      await t.rpc("anvil_mine", [`0x${blocks.toString(16)}`]);
      const tip = Number.parseInt(await t.rpc<string>("eth_blockNumber"), 16);
      const first = tip - blocks + 1;
      const id = await createStream({
        destinationAttributes: { url: receiver.url },
        startRange: first,
        endRange: tip,
        datasetBatchSize: 1,
        fixBlockReorgs: true,
      });
      await waitFor("the range delivered", async () => (await statusOf(id)) === "COMPLETED", 60_000);
      expect(receiver.received.map((r) => blockNumbers(r.json)[0])).toEqual(
        Array.from({ length: blocks }, (_, i) => first + i),
      );
      // One batch per request would be 400 (plus the tip checks); spans of empty blocks hold dozens.
      expect(nodeRequests).toBeLessThan(blocks / 5);
      const kept = (
        await t.db.$client.query<{ n: number; low: string; high: string }>(
          "select count(*)::int as n, min(block_number) as low, max(block_number) as high from stream_block_hashes where stream_id = $1",
          [id],
        )
      ).rows[0];
      // Pruned to the last KEPT_HASHES whenever a batch crosses a multiple of 64 blocks.
      expect(Number(kept.high)).toBe(tip);
      expect(kept.n).toBeGreaterThanOrEqual(KEPT_HASHES);
      expect(kept.n).toBeLessThanOrEqual(KEPT_HASHES + 64);
      expect(Number(kept.low)).toBe(tip - kept.n + 1);
    } finally {
      await engine.stop();
      await receiver.close();
      await new Promise((r) => counter.close(r));
    }
  }, 90_000);

  it("delivers every block to a PostgreSQL table, once each, in order", async () => {
    const url = new URL(t.database.url);
    const engine = await engineHere();
    try {
      const id = await createStream({
        destination: "POSTGRES",
        destinationAttributes: {
          host: url.hostname,
          port: Number(url.port),
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password) || undefined,
          database: url.pathname.slice(1),
          tableName: "public.stream_out",
          sslmode: "DISABLE",
        },
        endRange: 10,
        datasetBatchSize: 4,
      });
      await waitFor("completion", async () => (await statusOf(id)) === "COMPLETED", 30_000);
      const client = new pg.Client({ connectionString: t.database.url });
      await client.connect();
      try {
        const { rows } = await client.query("select block_start, block_end, data from stream_out order by id");
        expect(rows.map((r) => [Number(r.block_start), Number(r.block_end)])).toEqual([
          [1, 4],
          [5, 8],
          [9, 10],
        ]);
        expect(rows.flatMap((r) => blockNumbers(r.data))).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      } finally {
        await client.end();
      }
    } finally {
      await engine.stop();
    }
  }, 60_000);
});
