// After a reorg deeper than the served node's window, the archive node holds the old fork until the
// follower has rolled it back: nothing may be routed there meanwhile (issue 33). The follower is driven
// round by round here, and its route read between every step of the round that meets the reorg.
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

beforeAll(async () => {
  served = await startAnvil({ chainId: 31337 });
  servedRpc = new RpcClient(served.httpUrl);
  const genesis = await servedRpc.call<{ timestamp: string }>("eth_getBlockByNumber", ["0x0", false]);
  archive = await startAnvil({
    chainId: 31337,
    archive: {
      genesisTimestamp: Number(genesis.timestamp),
      statesDir: join(tmpdir(), `archive-reorg-test-${process.pid}`),
    },
  });
  archiveRpc = new RpcClient(archive.httpUrl);
  // Never started: the test runs its rounds.
  follower = new ArchiveFollower(served.httpUrl, archive.httpUrl, { pollMs: 60_000, log: () => undefined });
}, 30_000);

afterAll(async () => {
  await follower?.stop();
  await Promise.all([servedRpc?.close(), archiveRpc?.close()]);
  await Promise.all([served?.stop(), archive?.stop()]);
});

const TARGET = "0x00000000000000000000000000000000000a4c13";
const hashAt = async (rpc: RpcClient, n: number) =>
  (await rpc.call<{ hash: string } | null>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]))?.hash;

/** Pays TARGET and returns the block the payment was mined in (from its receipt: anvil answers before it mines). */
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

it("routes nothing to the archive node from the round that finds it on the old fork until it has rolled back", async () => {
  await servedRpc.call("anvil_mine", ["0x3"]);
  const snapshot = await servedRpc.call<string>("evm_snapshot");
  // The old fork: a payment, then more blocks than the served node keeps.
  const oldFirst = await pay("0x1");
  await servedRpc.call("anvil_mine", [`0x${(KEPT_STATES + 30).toString(16)}`]);
  const oldTip = oldFirst + KEPT_STATES + 30;
  await follower.follow();
  expect(await hashAt(archiveRpc, oldTip)).toBe(await hashAt(servedRpc, oldTip));
  const before = follower.routesBelow();
  expect(before).toBe(oldTip - KEPT_STATES + 1);

  // The new fork from the same parent, one block longer: its blocks below the served node's window differ
  // from the old fork's the archive node holds.
  await servedRpc.call("evm_revert", [snapshot]);
  const newFirst = await pay("0x2");
  expect(newFirst).toBe(oldFirst);
  await servedRpc.call("anvil_mine", [`0x${(KEPT_STATES + 31).toString(16)}`]);
  const newTip = oldTip + 1;
  expect(await hashAt(servedRpc, oldFirst)).not.toBe(await hashAt(archiveRpc, oldFirst));

  const routes: (number | undefined)[] = [];
  let done = false;
  const round = follower.follow().finally(() => {
    done = true;
  });
  while (!done) {
    routes.push(follower.routesBelow());
    await new Promise(setImmediate);
  }
  await round;
  // Before the round looked: the old route. The first change is to no route at all (before, the new head's
  // window, which sent the old fork's blocks from oldFirst up to it to the archive node during the rollback).
  const changed = routes.findIndex((r) => r !== before);
  expect(changed).toBeGreaterThan(-1);
  expect(routes[changed]).toBeUndefined();
  // Rolled back and replayed: the archive node has the new fork, and the route is the new head's window.
  expect(await hashAt(archiveRpc, newTip)).toBe(await hashAt(servedRpc, newTip));
  expect(await archiveRpc.call("eth_getBalance", [TARGET, `0x${oldFirst.toString(16)}`])).toBe("0x2");
  expect(follower.routesBelow()).toBe(newTip - KEPT_STATES + 1);
}, 60_000);
