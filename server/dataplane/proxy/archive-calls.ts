import type { JsonRpcCall } from "./jsonrpc.ts";

/**
 * Where each state-reading method takes its block: the calls the Archive add-on sends to the archive node
 * when that block is older than the served node keeps (chain/archive.ts).
 */
const BLOCK_PARAM = new Map<string, number>([
  ["eth_getBalance", 1],
  ["eth_getCode", 1],
  ["eth_getStorageAt", 2],
  ["eth_call", 1],
  ["eth_getProof", 2],
]);

/**
 * The block number a state-reading call names: a hex quantity, "earliest", or an EIP-1898 object's
 * blockNumber; undefined for a tag ("latest", "safe" …), a block hash, or any other method.
 */
export function stateBlockOf(call: JsonRpcCall): number | undefined {
  const at = BLOCK_PARAM.get(call.method);
  if (at === undefined || !Array.isArray(call.params)) return undefined;
  let block: unknown = call.params[at];
  if (block && typeof block === "object" && "blockNumber" in block) block = block.blockNumber;
  if (block === "earliest") return 0;
  if (typeof block !== "string" || !/^0x[0-9a-fA-F]{1,16}$/.test(block)) return undefined;
  return Number.parseInt(block, 16);
}
