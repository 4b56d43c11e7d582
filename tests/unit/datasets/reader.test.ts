import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BlockNotAvailableError,
  EVM_DATASETS,
  EvmDatasetReader,
  probeDatasets,
} from "../../../server/dataplane/datasets/reader.ts";
import { RpcClient, RpcError } from "../../../server/dataplane/datasets/rpc.ts";
import { type Activity, type Anvil, makeActivity, startAnvil, TRANSFER_TOPIC } from "./anvil.ts";

let anvil: Anvil;
let activity: Activity;
let reader: EvmDatasetReader;

beforeAll(async () => {
  anvil = await startAnvil();
  activity = await makeActivity(anvil.url);
  reader = new EvmDatasetReader(anvil.url);
}, 60_000);

afterAll(async () => {
  await reader?.close();
  await anvil?.stop();
});

type Block = { number: string; hash: string; transactions: { hash: string }[] };
type Receipt = { transactionHash: string; logs: { topics: string[] }[] };

describe("EVM dataset reader against anvil", () => {
  it("reads BLOCK with full transactions, one item per block", async () => {
    const { fromBlock, toBlock } = activity;
    const batch = await reader.fetchBatch("BLOCK", fromBlock, toBlock);
    expect(batch.items).toHaveLength(toBlock - fromBlock + 1);
    const blocks = batch.items as Block[];
    expect(blocks.map((b) => Number.parseInt(b.number, 16))).toEqual(
      Array.from({ length: toBlock - fromBlock + 1 }, (_, i) => fromBlock + i),
    );
    expect(blocks[0].transactions[0].hash).toBe(activity.smallTransfer);
  });

  it("reads TRANSACTIONS, RECEIPTS and BLOCK_WITH_RECEIPTS", async () => {
    const { fromBlock, toBlock } = activity;
    const txs = (await reader.fetchBatch("TRANSACTIONS", fromBlock, toBlock)).items as { hash: string }[][];
    expect(txs.flat().map((t) => t.hash)).toContain(activity.tokenTransfer);
    const receipts = (await reader.fetchBatch("RECEIPTS", toBlock, toBlock)).items as Receipt[][];
    expect(receipts[0][0].transactionHash).toBe(activity.tokenTransfer);
    expect(receipts[0][0].logs[0].topics[0]).toBe(TRANSFER_TOPIC);
    const both = (await reader.fetchBatch("BLOCK_WITH_RECEIPTS", toBlock, toBlock)).items as {
      block: Block;
      receipts: Receipt[];
    }[];
    expect(both[0].block.transactions[0].hash).toBe(both[0].receipts[0].transactionHash);
  });

  it("reads LOGS grouped per block, with empty arrays for blocks without logs", async () => {
    const { fromBlock, toBlock } = activity;
    const logs = (await reader.fetchBatch("LOGS", fromBlock, toBlock)).items as {
      address: string;
      topics: string[];
    }[][];
    expect(logs).toHaveLength(toBlock - fromBlock + 1);
    expect(logs[0]).toEqual([]);
    const last = logs[logs.length - 1];
    expect(last).toHaveLength(1);
    expect(last[0].address.toLowerCase()).toBe(activity.token.toLowerCase());
  });

  it("reads TRACE_BLOCKS and DEBUG_TRACE (callTracer) and the combined datasets", async () => {
    const n = activity.fromBlock;
    const traces = (await reader.fetchBatch("TRACE_BLOCKS", n, n)).items as { transactionHash: string }[][];
    expect(traces[0][0].transactionHash).toBe(activity.smallTransfer);
    const debug = (await reader.fetchBatch("DEBUG_TRACE", n, n)).items as {
      txHash: string;
      result: { type: string };
    }[][];
    expect(debug[0][0]).toMatchObject({ txHash: activity.smallTransfer, result: { type: "CALL" } });
    const withTrace = (await reader.fetchBatch("BLOCK_WITH_RECEIPTS_TRACE_BLOCK", n, n)).items[0] as object;
    expect(Object.keys(withTrace)).toEqual(["block", "receipts", "traces"]);
    const withDebug = (await reader.fetchBatch("BLOCK_WITH_RECEIPTS_DEBUG_TRACE", n, n)).items[0] as object;
    expect(Object.keys(withDebug)).toEqual(["block", "receipts", "trace"]);
  });

  it("says a block beyond the tip is not available rather than returning empty data", async () => {
    const tip = await reader.latestBlock();
    for (const dataset of ["BLOCK", "LOGS", "RECEIPTS"] as const) {
      await expect(reader.fetchBatch(dataset, tip, tip + 2)).rejects.toBeInstanceOf(BlockNotAvailableError);
      await expect(reader.fetchBatchJson(dataset, tip, tip + 2)).rejects.toBeInstanceOf(BlockNotAvailableError);
    }
  });

  it("reads every dataset as JSON text equal to the parsed items written back", async () => {
    const { fromBlock, toBlock } = activity;
    for (const dataset of EVM_DATASETS) {
      const parsed = await reader.fetchBatch(dataset, fromBlock, toBlock);
      const text = await reader.fetchBatchJson(dataset, fromBlock, toBlock);
      expect(text).toMatchObject({ dataset, fromBlock, toBlock });
      expect(text.itemsJson.map((json) => JSON.parse(json))).toEqual(parsed.items);
      // anvil writes compact JSON, so the node's text is byte for byte what JSON.stringify makes.
      expect(`[${text.itemsJson.join(",")}]`).toBe(JSON.stringify(parsed.items));
    }
  });

  it("probes every EVM dataset as available on anvil", async () => {
    const availability = await probeDatasets(anvil.url);
    expect(Object.keys(availability).sort()).toEqual([...EVM_DATASETS].sort());
    for (const d of EVM_DATASETS) expect(availability[d]).toEqual({ available: true });
  });

  it("marks datasets unavailable when the node lacks their methods (trace/debug namespaces disabled)", async () => {
    // A node without the trace and debug namespaces: a loopback proxy in front of anvil that answers
    // those methods the way such nodes do (-32601), and forwards everything else.
    const server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      const calls = JSON.parse(body) as { id: number; method: string }[] | { id: number; method: string };
      const list = Array.isArray(calls) ? calls : [calls];
      const answers = await Promise.all(
        list.map(async (c) => {
          if (/^(trace|debug)_/.test(c.method)) {
            return { jsonrpc: "2.0", id: c.id, error: { code: -32601, message: "Method not found" } };
          }
          const r = await fetch(anvil.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(c),
          });
          return r.json();
        }),
      );
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const availability = await probeDatasets(url);
      expect(availability.BLOCK_WITH_RECEIPTS).toEqual({ available: true });
      expect(availability.LOGS).toEqual({ available: true });
      expect(availability.TRACE_BLOCKS).toEqual({ available: false, reason: "the node does not support trace_block" });
      expect(availability.BLOCK_WITH_RECEIPTS_DEBUG_TRACE).toEqual({
        available: false,
        reason: "the node does not support debug_traceBlockByNumber",
      });
    } finally {
      server.close();
    }
  });

  it("reports a method the node does not know as method-not-found", async () => {
    const rpc = new RpcClient(anvil.url);
    try {
      const err = await rpc.call("trace_doesNotExist", []).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).methodNotFound).toBe(true);
      const inBatch = await rpc
        .batchJson([
          { method: "eth_blockNumber", params: [] },
          { method: "trace_doesNotExist", params: [] },
        ])
        .catch((e: unknown) => e);
      expect(inBatch).toBeInstanceOf(RpcError);
      expect(inBatch).toMatchObject({ method: "trace_doesNotExist", methodNotFound: true });
    } finally {
      await rpc.close();
    }
  });

  it("meets a node's batch limit by halving its batches, for both ways nodes refuse them", async () => {
    // A loopback proxy in front of anvil that refuses batches over 3 calls, as Erigon does (one error
    // object) or with HTTP 413, and records the size of every batch it was sent.
    const sizes: number[] = [];
    let refuseWith413 = false;
    const server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      const calls = JSON.parse(body) as unknown[];
      sizes.push(calls.length);
      if (calls.length > 3) {
        if (refuseWith413) res.writeHead(413).end("request entity too large");
        else
          res.end(
            JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch limit 3 exceeded" } }),
          );
        return;
      }
      const r = await fetch(anvil.url, { method: "POST", headers: { "content-type": "application/json" }, body });
      res.setHeader("content-type", "application/json");
      res.end(await r.text());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const capped = new EvmDatasetReader(url);
    try {
      const direct = await reader.fetchBatchJson("BLOCK_WITH_RECEIPTS", 1, 4);
      // 8 calls: refused, then 4 refused, then 2 + 2 + 2 + 2; the halved size stays for the next read.
      expect(await capped.fetchBatchJson("BLOCK_WITH_RECEIPTS", 1, 4)).toEqual(direct);
      expect(sizes).toEqual([8, 4, 2, 2, 2, 2]);
      sizes.length = 0;
      await capped.fetchBatchJson("BLOCK", 1, 3);
      expect(sizes).toEqual([2, 1]);
      refuseWith413 = true;
      sizes.length = 0;
      const other = new RpcClient(url);
      const numbers = await other.batch(
        [0, 1, 2, 3, 4].map((n) => ({ method: "eth_getBlockByNumber", params: [`0x${n}`, false] })),
      );
      await other.close();
      expect((numbers as { number: string }[]).map((b) => Number(b.number))).toEqual([0, 1, 2, 3, 4]);
      expect(sizes).toEqual([5, 3, 2]);
    } finally {
      await capped.close();
      server.close();
    }
  });
});
