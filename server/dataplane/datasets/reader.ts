import { RpcClient, type RpcClientOptions, RpcError } from "./rpc.ts";

/**
 * Reads stream datasets from an EVM node over JSON-RPC. One batch covers blocks fromBlock..toBlock
 * (inclusive); `items[i]` is block fromBlock + i, shaped as the node returns it:
 *
 * | dataset                           | item per block                                                     |
 * | --------------------------------- | ------------------------------------------------------------------ |
 * | BLOCK                             | eth_getBlockByNumber(n, true) (block with full transactions)       |
 * | TRANSACTIONS                      | that block's `transactions` array                                  |
 * | RECEIPTS                          | eth_getBlockReceipts(n)                                            |
 * | BLOCK_WITH_RECEIPTS               | `{ block, receipts }`                                              |
 * | LOGS                              | the logs of eth_getLogs({fromBlock, toBlock}) whose blockNumber is n |
 * | TRACE_BLOCKS                      | trace_block(n)                                                     |
 * | DEBUG_TRACE                       | debug_traceBlockByNumber(n, { tracer: "callTracer" })              |
 * | BLOCK_WITH_RECEIPTS_TRACE_BLOCK   | `{ block, receipts, traces }` (traces = trace_block)               |
 * | BLOCK_WITH_RECEIPTS_DEBUG_TRACE   | `{ block, receipts, trace }` (trace = debug_traceBlockByNumber)    |
 *
 * The calls of a batch go out as JSON-RPC batch requests. A block the node does not have yet is a
 * {@link BlockNotAvailableError} (the engine waits and retries), never an empty item. LEDGER and
 * PROGRAMS_WITH_LOGS are not EVM datasets and are not served here.
 */

export const EVM_DATASETS = [
  "BLOCK",
  "RECEIPTS",
  "BLOCK_WITH_RECEIPTS",
  "LOGS",
  "TRANSACTIONS",
  "TRACE_BLOCKS",
  "DEBUG_TRACE",
  "BLOCK_WITH_RECEIPTS_TRACE_BLOCK",
  "BLOCK_WITH_RECEIPTS_DEBUG_TRACE",
] as const;
export type EvmDataset = (typeof EVM_DATASETS)[number];

/** The JSON-RPC methods each dataset needs; a node lacking any of them cannot serve the dataset. */
export const DATASET_METHODS: Record<EvmDataset, string[]> = {
  BLOCK: ["eth_getBlockByNumber"],
  TRANSACTIONS: ["eth_getBlockByNumber"],
  RECEIPTS: ["eth_getBlockReceipts"],
  BLOCK_WITH_RECEIPTS: ["eth_getBlockByNumber", "eth_getBlockReceipts"],
  LOGS: ["eth_getLogs"],
  TRACE_BLOCKS: ["trace_block"],
  DEBUG_TRACE: ["debug_traceBlockByNumber"],
  BLOCK_WITH_RECEIPTS_TRACE_BLOCK: ["eth_getBlockByNumber", "eth_getBlockReceipts", "trace_block"],
  BLOCK_WITH_RECEIPTS_DEBUG_TRACE: ["eth_getBlockByNumber", "eth_getBlockReceipts", "debug_traceBlockByNumber"],
};

export interface DatasetBatch {
  dataset: EvmDataset;
  fromBlock: number;
  toBlock: number;
  items: unknown[];
}

export class BlockNotAvailableError extends Error {
  constructor(readonly blockNumber: number) {
    super(`block ${blockNumber} is not available on the node yet`);
    this.name = "BlockNotAvailableError";
  }
}

const hex = (n: number) => `0x${n.toString(16)}`;

function methodCall(method: string, n: number) {
  switch (method) {
    case "eth_getBlockByNumber":
      return { method, params: [hex(n), true] };
    case "debug_traceBlockByNumber":
      return { method, params: [hex(n), { tracer: "callTracer" }] };
    default:
      return { method, params: [hex(n)] };
  }
}

export class EvmDatasetReader {
  private readonly rpc: RpcClient;

  constructor(url: string, options: RpcClientOptions = {}) {
    this.rpc = new RpcClient(url, options);
  }

  async latestBlock(): Promise<number> {
    return Number.parseInt(await this.rpc.call<string>("eth_blockNumber"), 16);
  }

  async fetchBatch(dataset: EvmDataset, fromBlock: number, toBlock: number): Promise<DatasetBatch> {
    if (!EVM_DATASETS.includes(dataset)) throw new Error(`dataset ${dataset} is not served by the EVM reader`);
    if (!Number.isSafeInteger(fromBlock) || !Number.isSafeInteger(toBlock) || fromBlock < 0 || toBlock < fromBlock) {
      throw new RangeError(`bad block range ${fromBlock}..${toBlock}`);
    }
    const blocks = Array.from({ length: toBlock - fromBlock + 1 }, (_, i) => fromBlock + i);
    if (dataset === "LOGS") return { dataset, fromBlock, toBlock, items: await this.logs(blocks, fromBlock, toBlock) };

    const methods = DATASET_METHODS[dataset];
    const calls = blocks.flatMap((n) => methods.map((m) => methodCall(m, n)));
    const results = await this.rpc.batch(calls);
    const per = (i: number, method: string) => results[i * methods.length + methods.indexOf(method)];
    const items = blocks.map((n, i) => {
      const block = methods.includes("eth_getBlockByNumber") ? per(i, "eth_getBlockByNumber") : undefined;
      const receipts = methods.includes("eth_getBlockReceipts") ? per(i, "eth_getBlockReceipts") : undefined;
      if (block === null || receipts === null) throw new BlockNotAvailableError(n);
      switch (dataset) {
        case "BLOCK":
          return block;
        case "TRANSACTIONS":
          return (block as { transactions: unknown[] }).transactions;
        case "RECEIPTS":
          return receipts;
        case "BLOCK_WITH_RECEIPTS":
          return { block, receipts };
        case "TRACE_BLOCKS":
          return this.present(per(i, "trace_block"), n);
        case "DEBUG_TRACE":
          return this.present(per(i, "debug_traceBlockByNumber"), n);
        case "BLOCK_WITH_RECEIPTS_TRACE_BLOCK":
          return { block, receipts, traces: this.present(per(i, "trace_block"), n) };
        case "BLOCK_WITH_RECEIPTS_DEBUG_TRACE":
          return { block, receipts, trace: this.present(per(i, "debug_traceBlockByNumber"), n) };
      }
      throw new Error(`unhandled dataset ${dataset}`);
    });
    return { dataset, fromBlock, toBlock, items };
  }

  close(): Promise<void> {
    return this.rpc.close();
  }

  private present(value: unknown, n: number): unknown {
    if (value === null || value === undefined) throw new BlockNotAvailableError(n);
    return value;
  }

  /** eth_getLogs does not tell a missing block from an empty one, so the range is checked against the tip. */
  private async logs(blocks: number[], fromBlock: number, toBlock: number): Promise<unknown[][]> {
    const [tipHex, logs] = (await this.rpc.batch([
      { method: "eth_blockNumber", params: [] },
      { method: "eth_getLogs", params: [{ fromBlock: hex(fromBlock), toBlock: hex(toBlock) }] },
    ])) as [string, { blockNumber: string }[]];
    const tip = Number.parseInt(tipHex, 16);
    if (tip < toBlock) throw new BlockNotAvailableError(tip + 1);
    const byBlock = new Map<number, unknown[]>(blocks.map((n) => [n, []]));
    for (const log of logs) byBlock.get(Number.parseInt(log.blockNumber, 16))?.push(log);
    return blocks.map((n) => byBlock.get(n) ?? []);
  }
}

export interface DatasetAvailability {
  available: boolean;
  /** Why not, when not available: the method the node lacks, or the error it answered. */
  reason?: string;
}

/**
 * Asks the node once per needed method (on its latest block) and reports which datasets it can serve.
 * A method the node does not know makes every dataset needing it unavailable; any other error is
 * reported as the reason too, since the dataset cannot be served either way.
 */
export async function probeDatasets(
  url: string,
  options: RpcClientOptions = {},
): Promise<Record<EvmDataset, DatasetAvailability>> {
  const rpc = new RpcClient(url, options);
  try {
    const tip = Number.parseInt(await rpc.call<string>("eth_blockNumber"), 16);
    const methods = [...new Set(Object.values(DATASET_METHODS).flat())];
    const calls = methods.map((m) =>
      m === "eth_getLogs" ? { method: m, params: [{ fromBlock: hex(tip), toBlock: hex(tip) }] } : methodCall(m, tip),
    );
    const results = await rpc.batchSettled(calls);
    const methodState = new Map<string, DatasetAvailability>();
    methods.forEach((m, i) => {
      const r = results[i];
      if (r instanceof RpcError) {
        methodState.set(m, {
          available: false,
          reason: r.methodNotFound ? `the node does not support ${m}` : `${m} failed: ${r.rpcMessage}`,
        });
      } else if (r instanceof Error) {
        methodState.set(m, { available: false, reason: r.message });
      } else {
        methodState.set(m, { available: true });
      }
    });
    const out = {} as Record<EvmDataset, DatasetAvailability>;
    for (const d of EVM_DATASETS) {
      const missing = DATASET_METHODS[d].map((m) => methodState.get(m)).find((s) => s && !s.available);
      out[d] = missing ?? { available: true };
    }
    return out;
  } finally {
    await rpc.close();
  }
}
