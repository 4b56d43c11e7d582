// The archive node beside a local node: it replays the served chain block for block (the same hashes),
// and after a reorg of the served chain (evm_revert, then other blocks) it rolls back and follows the new one.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AnvilNode, KEPT_STATES, startAnvil } from "../../../server/dataplane/chain/anvil.ts";
import { ArchiveFollower } from "../../../server/dataplane/chain/archive.ts";
import { RpcClient } from "../../../server/dataplane/datasets/rpc.ts";

let served: AnvilNode;
let archive: AnvilNode;
let follower: ArchiveFollower;
let servedRpc: RpcClient;
let archiveRpc: RpcClient;
const logged: string[] = [];

beforeAll(async () => {
  served = await startAnvil({ chainId: 31337 });
  servedRpc = new RpcClient(served.httpUrl);
  const genesis = await servedRpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["0x0", false]);
  archive = await startAnvil({
    chainId: 31337,
    archive: { genesisTimestamp: Number(genesis.timestamp), statesDir: join(tmpdir(), `archive-test-${process.pid}`) },
  });
  archiveRpc = new RpcClient(archive.httpUrl);
  follower = new ArchiveFollower(served.httpUrl, archive.httpUrl, { pollMs: 50, log: (m) => logged.push(m) });
  follower.start();
}, 30_000);

afterAll(async () => {
  await follower?.stop();
  await Promise.all([servedRpc?.close(), archiveRpc?.close()]);
  await Promise.all([served?.stop(), archive?.stop()]);
});

const TARGET = "0x00000000000000000000000000000000000a4c12";
const hashAt = async (rpc: RpcClient, n: number) =>
  (await rpc.call<{ hash: string } | null>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]))?.hash;
const head = async (rpc: RpcClient) => Number(await rpc.call<string>("eth_blockNumber"));

/**
 * Pays TARGET and returns the block the payment was mined in. Anvil answers eth_sendTransaction before its
 * automine has mined the block (under load, eth_blockNumber still said the block before), so it waits for
 * the receipt.
 */
async function pay(value: string): Promise<number> {
  const [from] = await servedRpc.call<string[]>("eth_accounts");
  const hash = await servedRpc.call<string>("eth_sendTransaction", [{ from, to: TARGET, value }]);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const receipt = await servedRpc.call<{ blockNumber: string } | null>("eth_getTransactionReceipt", [hash]);
    if (receipt) return Number(receipt.blockNumber);
    if (Date.now() > deadline) throw new Error(`the payment ${hash} was not mined`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the archive node has the served node's head block, hash for hash. */
async function followed(): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const n = await head(servedRpc);
    if ((await head(archiveRpc)) === n && (await hashAt(archiveRpc, n)) === (await hashAt(servedRpc, n))) return n;
    if (Date.now() > deadline) throw new Error(`the archive node did not follow: ${logged.join("; ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("replays the served chain with the same hashes, keeps state the served node pruned, and follows a reorg", async () => {
  const paidAt = await pay("0x1");
  await servedRpc.call("anvil_mine", [`0x${(KEPT_STATES + 10).toString(16)}`]);
  const snapshot = await servedRpc.call<string>("evm_snapshot");
  await pay("0x2");
  await servedRpc.call("anvil_mine", ["0x2"]);
  const tip = await followed();
  for (const n of [1, paidAt, tip - 1])
    expect(await hashAt(archiveRpc, n), `block ${n}`).toBe(await hashAt(servedRpc, n));
  // The served node pruned the first payment's block; the archive node answers it.
  const old = `0x${paidAt.toString(16)}`;
  const pruned = await servedRpc.batchSettled([{ method: "eth_getBalance", params: [TARGET, old] }]);
  expect(pruned[0]).toBeInstanceOf(Error);
  expect(await archiveRpc.call("eth_getBalance", [TARGET, old])).toBe("0x1");
  expect(follower.routesBelow()).toBe(tip - KEPT_STATES + 1);

  // A reorg: the served chain goes back to the snapshot and grows another way, one block longer.
  await servedRpc.call("evm_revert", [snapshot]);
  await pay("0x5");
  await servedRpc.call("anvil_mine", ["0x3"]);
  const newTip = await followed();
  expect(newTip).toBe(tip + 1);
  expect(await archiveRpc.call("eth_getBalance", [TARGET, "latest"])).toBe("0x6");
  expect(logged.some((m) => m.includes("rolled back"))).toBe(true);
}, 60_000);
