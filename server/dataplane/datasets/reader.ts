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

/** A batch as {@link EvmDatasetReader.fetchBatchJson} reads it: each item's JSON text. */
export interface DatasetBatchJson {
  dataset: EvmDataset;
  fromBlock: number;
  toBlock: number;
  itemsJson: string[];
}

/** What the engine's reorg check needs of a block. */
export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
}

/** Datasets whose items carry their block: the item itself, or its `block`. */
const BLOCK_CARRYING = new Set<EvmDataset>([
  "BLOCK",
  "BLOCK_WITH_RECEIPTS",
  "BLOCK_WITH_RECEIPTS_TRACE_BLOCK",
  "BLOCK_WITH_RECEIPTS_DEBUG_TRACE",
]);

/** The headers of a batch's blocks, parsed from its items; null when its items do not all carry their block. */
export function headersInItems(batch: DatasetBatchJson): BlockHeader[] | null {
  if (!BLOCK_CARRYING.has(batch.dataset)) return null;
  const headers: BlockHeader[] = [];
  for (const json of batch.itemsJson) {
    const item: unknown = JSON.parse(json);
    const b = (batch.dataset === "BLOCK" ? item : (item as { block?: unknown } | null)?.block) as
      | { number?: string; hash?: string; parentHash?: string }
      | undefined;
    if (!b?.hash || !b.parentHash || !b.number) return null;
    headers.push({ number: Number.parseInt(b.number, 16), hash: b.hash, parentHash: b.parentHash });
  }
  return headers;
}

export class BlockNotAvailableError extends Error {
  constructor(readonly blockNumber: number) {
    super(`block ${blockNumber} is not available on the node yet`);
    this.name = "BlockNotAvailableError";
  }
}

const hex = (n: number) => `0x${n.toString(16)}`;

function checkRequest(dataset: EvmDataset, fromBlock: number, toBlock: number): void {
  if (!EVM_DATASETS.includes(dataset)) throw new Error(`dataset ${dataset} is not served by the EVM reader`);
  if (!Number.isSafeInteger(fromBlock) || !Number.isSafeInteger(toBlock) || fromBlock < 0 || toBlock < fromBlock) {
    throw new RangeError(`bad block range ${fromBlock}..${toBlock}`);
  }
}

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
    checkRequest(dataset, fromBlock, toBlock);
    if (dataset === "LOGS") {
      const blocks = Array.from({ length: toBlock - fromBlock + 1 }, (_, i) => fromBlock + i);
      return { dataset, fromBlock, toBlock, items: await this.logs(blocks, fromBlock, toBlock) };
    }
    if (dataset === "TRANSACTIONS") {
      const { itemsJson } = await this.fetchBatchJson("BLOCK", fromBlock, toBlock);
      const items = itemsJson.map((json) => (JSON.parse(json) as { transactions: unknown[] }).transactions);
      return { dataset, fromBlock, toBlock, items };
    }
    const { itemsJson } = await this.fetchBatchJson(dataset, fromBlock, toBlock);
    return { dataset, fromBlock, toBlock, items: itemsJson.map((json) => JSON.parse(json)) };
  }

  /**
   * The batch with each item as JSON text. An item that is one call's result (or an object of several)
   * is the node's own text, never parsed: the stream engine spends nothing on objects it only passes
   * on. TRANSACTIONS and LOGS are cut out of larger results, so they are parsed and written back.
   * fetchBatch parses these items; the datasets' shapes are made here.
   */
  async fetchBatchJson(dataset: EvmDataset, fromBlock: number, toBlock: number): Promise<DatasetBatchJson> {
    checkRequest(dataset, fromBlock, toBlock);
    if (dataset === "TRANSACTIONS" || dataset === "LOGS") {
      const batch = await this.fetchBatch(dataset, fromBlock, toBlock);
      return { dataset, fromBlock, toBlock, itemsJson: batch.items.map((item) => JSON.stringify(item)) };
    }
    const methods = DATASET_METHODS[dataset];
    const count = toBlock - fromBlock + 1;
    const calls = [];
    for (let n = fromBlock; n <= toBlock; n++) for (const m of methods) calls.push(methodCall(m, n));
    const results = await this.rpc.batchJson(calls);
    const itemsJson: string[] = [];
    for (let i = 0; i < count; i++) {
      const per = (method: string) => {
        const text = results[i * methods.length + methods.indexOf(method)];
        if (text === "null") throw new BlockNotAvailableError(fromBlock + i);
        return text;
      };
      switch (dataset) {
        case "BLOCK":
          itemsJson.push(per("eth_getBlockByNumber"));
          break;
        case "RECEIPTS":
          itemsJson.push(per("eth_getBlockReceipts"));
          break;
        case "TRACE_BLOCKS":
          itemsJson.push(per("trace_block"));
          break;
        case "DEBUG_TRACE":
          itemsJson.push(per("debug_traceBlockByNumber"));
          break;
        case "BLOCK_WITH_RECEIPTS":
          itemsJson.push(`{"block":${per("eth_getBlockByNumber")},"receipts":${per("eth_getBlockReceipts")}}`);
          break;
        case "BLOCK_WITH_RECEIPTS_TRACE_BLOCK":
          itemsJson.push(
            `{"block":${per("eth_getBlockByNumber")},"receipts":${per("eth_getBlockReceipts")},"traces":${per("trace_block")}}`,
          );
          break;
        case "BLOCK_WITH_RECEIPTS_DEBUG_TRACE":
          itemsJson.push(
            `{"block":${per("eth_getBlockByNumber")},"receipts":${per("eth_getBlockReceipts")},"trace":${per("debug_traceBlockByNumber")}}`,
          );
          break;
      }
    }
    return { dataset, fromBlock, toBlock, itemsJson };
  }

  close(): Promise<void> {
    return this.rpc.close();
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
