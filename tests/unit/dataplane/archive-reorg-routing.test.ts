// After a reorg deeper than the served node's window, the archive node holds the old fork until the
// follower has rolled it back: nothing may be routed there meanwhile (issue 33). The follower is driven
// round by round here, and its route read between every step of the round that meets the reorg.
import { afterAll, beforeAll, expect, it } from "vitest";
import { KEPT_STATES } from "../../../server/dataplane/chain/anvil.ts";
import { ArchiveFollower } from "../../../server/dataplane/chain/archive.ts";
import type { RpcClient } from "../../../server/dataplane/datasets/rpc.ts";
import { type ArchivePair, hashAt, payAndWait, startArchivePair } from "../../support/archive-pair.ts";

let nodes: ArchivePair;
let follower: ArchiveFollower;
let servedRpc: RpcClient;
let archiveRpc: RpcClient;

beforeAll(async () => {
  nodes = await startArchivePair("archive-reorg-test");
  ({ servedRpc, archiveRpc } = nodes);
  // Never started: the test runs its rounds.
  follower = new ArchiveFollower(nodes.served.httpUrl, nodes.archive.httpUrl, { pollMs: 60_000, log: () => undefined });
}, 30_000);

afterAll(async () => {
  await follower?.stop();
  await nodes?.stop();
});

const TARGET = "0x00000000000000000000000000000000000a4c13";
const pay = (value: string) => payAndWait(servedRpc, TARGET, value);

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
