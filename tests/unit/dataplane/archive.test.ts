// The archive node beside a local node: it replays the served chain block for block (the same hashes),
// and after a reorg of the served chain (evm_revert, then other blocks) it rolls back and follows the new one.
import { afterAll, beforeAll, expect, it } from "vitest";
import { KEPT_STATES } from "../../../server/dataplane/chain/anvil.ts";
import { ArchiveFollower } from "../../../server/dataplane/chain/archive.ts";
import type { RpcClient } from "../../../server/dataplane/datasets/rpc.ts";
import { type ArchivePair, hashAt, payAndWait, startArchivePair } from "../../support/archive-pair.ts";

let nodes: ArchivePair;
let follower: ArchiveFollower;
let servedRpc: RpcClient;
let archiveRpc: RpcClient;
const logged: string[] = [];

beforeAll(async () => {
  nodes = await startArchivePair("archive-test");
  ({ servedRpc, archiveRpc } = nodes);
  follower = new ArchiveFollower(nodes.served.httpUrl, nodes.archive.httpUrl, {
    pollMs: 50,
    log: (m) => logged.push(m),
  });
  follower.start();
}, 30_000);

afterAll(async () => {
  await follower?.stop();
  await nodes?.stop();
});

const TARGET = "0x00000000000000000000000000000000000a4c12";
const head = async (rpc: RpcClient) => Number(await rpc.call<string>("eth_blockNumber"));

const pay = (value: string) => payAndWait(servedRpc, TARGET, value);

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
