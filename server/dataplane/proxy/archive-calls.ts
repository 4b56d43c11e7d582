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

/**
 * Blocks from the oldest the served node keeps (as the archive follower saw it last) that still go to the
 * archive node: the served node mines on between the follower's looks, and a call at the window's edge
 * may reach it after that block's state left. The archive node has these blocks (the follower replayed
 * past them before they neared the edge).
 */
export const EDGE_MARGIN_BLOCKS = 8;

/**
 * Where an Archive add-on's state read at `block` goes: the archive node below the served node's window
 * (`routesBelow`, the follower's) and its margin; the served node, falling back to the archive node when it
 * answers that it no longer keeps the state, for the rest of what the archive node has replayed (the
 * served head may have moved on more than the margin since the follower looked); the served node alone
 * for newer blocks (the archive node has not got them).
 */
export function archiveWay(
  block: number,
  routesBelow: number,
  replayedTo: number | undefined,
): "archive" | "served-else-archive" | "served" {
  if (replayedTo === undefined || block > replayedTo) return block < routesBelow ? "archive" : "served";
  return block < routesBelow + EDGE_MARGIN_BLOCKS ? "archive" : "served-else-archive";
}

/**
 * Whether a node's answer (its JSON text) is the error of a node that no longer keeps the state of the
 * block asked: anvil's BlockOutOfRange, geth's "missing trie node" and "historical state not available",
 * Erigon's and Nethermind's pruned-state errors.
 */
export function stateNotKept(answer: string): boolean {
  if (!answer.includes('"error"')) return false;
  try {
    const parsed = JSON.parse(answer) as { error?: { message?: unknown } };
    const message = parsed?.error?.message;
    return typeof message === "string" && STATE_NOT_KEPT.test(message);
  } catch {
    return false;
  }
}

const STATE_NOT_KEPT = /BlockOutOfRange|missing trie node|state.{0,40}not available|pruned/i;
