// The Archive add-on: the local node is pruned (it keeps the state of its last KEPT_STATES blocks) and an
// archive-mode node beside it replays its chain; an endpoint with the add-on reads state at older blocks
// from the archive node, one without it gets the pruned node's own error.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { KEPT_STATES } from "../../server/dataplane/chain/anvil.ts";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { EDGE_MARGIN_BLOCKS } from "../../server/dataplane/proxy/archive-calls.ts";
import { type GqlClient, signUp, startTestApp, type TestApp } from "../support/api.ts";

const NETWORK = "ethereum-mainnet";
const TARGET = "0x00000000000000000000000000000000000a4c11";
let app: TestApp;
let networksDir = "";
let node: RpcClient;
/** The block where TARGET received its first wei, older than the pruned node keeps by the time it is read. */
let oldBlock = 0;

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

async function send(value: string): Promise<number> {
  const [from] = await node.call<string[]>("eth_accounts");
  const hash = await node.call<string>("eth_sendTransaction", [{ from, to: TARGET, value }]);
  await node.call("anvil_mine", ["0x1"]);
  const receipt = await node.call<{ blockNumber: string }>("eth_getTransactionReceipt", [hash]);
  return Number(receipt.blockNumber);
}

beforeAll(async () => {
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-archive-"));
  const file = join(networksDir, "networks.json");
  // Blocks only when the test mines them: what the pruned node keeps is then known exactly.
  writeFileSync(file, JSON.stringify({ local: { networks: [NETWORK], blockTimeSeconds: 0 } }));
  const saved = { local: process.env.NODEPLANE_LOCAL_CHAIN, networks: process.env.NODEPLANE_NETWORKS_CONFIG };
  process.env.NODEPLANE_LOCAL_CHAIN = "1";
  process.env.NODEPLANE_NETWORKS_CONFIG = file;
  try {
    app = await startTestApp({ NODEPLANE_ARCHIVE_NODES: "1" });
  } finally {
    restoreEnv("NODEPLANE_LOCAL_CHAIN", saved.local);
    restoreEnv("NODEPLANE_NETWORKS_CONFIG", saved.networks);
  }
  const upstream = app.services.upstreams.get(NETWORK);
  if (!upstream) throw new Error("no local node");
  node = new RpcClient(upstream.httpUrl);
  oldBlock = await send("0x1");
  await node.call("anvil_mine", [`0x${(KEPT_STATES + 20).toString(16)}`]);
  await send("0x2");
  // The archive node replays the served chain a round at a time.
  const archive = upstream.archive;
  if (!archive) throw new Error("no archive node beside the local node");
  const deadline = Date.now() + 30_000;
  while ((archive.routesBelow() ?? 0) <= oldBlock) {
    if (Date.now() > deadline) throw new Error(`the archive node did not follow: ${archive.routesBelow()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 120_000);

afterAll(async () => {
  await node?.close();
  await app?.close();
  if (networksDir) rmSync(networksDir, { recursive: true, force: true });
});

interface Endpoint {
  id: string;
  exId: string;
  initialToken: string;
}

interface Answer {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

async function post<T>(endpoint: Endpoint, body: unknown): Promise<T> {
  const res = await fetch(`${app.url}/rpc/${endpoint.exId}/${endpoint.initialToken}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const balanceAt = (endpoint: Endpoint, block: string | { blockNumber: string }, id: unknown = 1) =>
  post<Answer>(endpoint, { jsonrpc: "2.0", id, method: "eth_getBalance", params: [TARGET, block] });

async function newEndpoint(client: GqlClient): Promise<Endpoint> {
  const data = await client.gqlOk<{ createEndpoint: Endpoint }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "${NETWORK}" }) { id exId initialToken } }`,
  );
  return data.createEndpoint;
}

it("state at a block older than the pruned node keeps: the node's own error without the add-on, the archive node's answer with it", async () => {
  const user = await signUp(app);
  const endpoint = await newEndpoint(user.client);
  // The pruned node itself refuses the old block.
  const direct = await fetch(app.services.upstreams.get(NETWORK)?.httpUrl ?? "", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [TARGET, hex(oldBlock)] }),
  });
  const nodeError = ((await direct.json()) as Answer).error;
  expect(nodeError?.message).toMatch(/BlockOutOfRange/);

  // Without the add-on: the node's own answer, unchanged.
  expect((await balanceAt(endpoint, hex(oldBlock))).error).toEqual(nodeError);
  expect((await balanceAt(endpoint, "latest")).result).toBe("0x3");

  // The add-on's page names the networks this installation has no archive node for: only this one has.
  const page = await user.client.gqlOk<{ addon: { status: string; serviceNote: string | null } }>(
    `{ addon(slug: "archive") { status serviceNote } }`,
  );
  expect(page.addon).toEqual({
    status: "LIVE",
    serviceNote:
      "No archive node is configured here for ethereum-sepolia, base-sepolia, polygon-amoy: Archive cannot be installed on endpoints there.",
  });

  const { installAddon } = await user.client.gqlOk<{ installAddon: { id: string } }>(
    `mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "archive-standard" }) { id } }`,
    { e: endpoint.id },
  );
  // With it: the balance at the old block (1 wei then, 3 now), by number, "earliest" and EIP-1898.
  expect((await balanceAt(endpoint, hex(oldBlock))).result).toBe("0x1");
  expect((await balanceAt(endpoint, { blockNumber: hex(oldBlock) })).result).toBe("0x1");
  expect((await balanceAt(endpoint, "earliest")).result).toBe("0x0");
  expect((await balanceAt(endpoint, hex(oldBlock - 1))).result).toBe("0x0");
  const code = await post<Answer>(endpoint, {
    jsonrpc: "2.0",
    id: 2,
    method: "eth_getCode",
    params: [TARGET, hex(oldBlock)],
  });
  expect(code.result).toBe("0x");
  // Recent blocks stay with the served node; a batch mixing both answers in order.
  const batch = await post<Answer[]>(endpoint, [
    { jsonrpc: "2.0", id: "now", method: "eth_getBalance", params: [TARGET, "latest"] },
    { jsonrpc: "2.0", id: "then", method: "eth_getBalance", params: [TARGET, hex(oldBlock)] },
    { jsonrpc: "2.0", id: "chain", method: "eth_chainId", params: [] },
  ]);
  expect(batch).toEqual([
    { jsonrpc: "2.0", id: "now", result: "0x3" },
    { jsonrpc: "2.0", id: "then", result: "0x1" },
    { jsonrpc: "2.0", id: "chain", result: "0x1" },
  ]);
  // Another endpoint of the account has not got it.
  const bare = await newEndpoint(user.client);
  expect((await balanceAt(bare, hex(oldBlock))).error).toEqual(nodeError);

  // Removed at once: the node's own error again at the next call.
  await user.client.gqlOk(`mutation($id: ID!) { deactivateAddOnImmediately(accountAddOnId: $id) { id } }`, {
    id: installAddon.id,
  });
  expect((await balanceAt(endpoint, hex(oldBlock))).error).toEqual(nodeError);
}, 60_000);

it("a call at a block that left the pruned node's window since the archive follower last looked: the archive node's answer, not the pruned node's error", async () => {
  const user = await signUp(app);
  const endpoint = await newEndpoint(user.client);
  await user.client.gqlOk(
    `mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "archive-standard" }) { id } }`,
    { e: endpoint.id },
  );
  const archive = app.services.upstreams.get(NETWORK)?.archive;
  if (!archive) throw new Error("no archive node beside the local node");
  const head = Number(await node.call<string>("eth_blockNumber"));
  // The oldest block the pruned node keeps, as the follower saw it last: the edge of the window.
  const edge = head - KEPT_STATES + 1;
  const deadline = Date.now() + 30_000;
  while (archive.routesBelow() !== edge) {
    if (Date.now() > deadline) throw new Error(`the archive node did not follow: ${archive.routesBelow()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // The chain moves on before the follower looks again (it polls): the edge block's state, and that of
  // blocks past the proxy's margin above it, leave the pruned node while the proxy still sees them as kept.
  await node.call("anvil_mine", [hex(KEPT_STATES / 2)]);
  const beyondMargin = edge + EDGE_MARGIN_BLOCKS + 1;
  for (const block of [edge, beyondMargin]) {
    const pruned = await node.batchSettled([{ method: "eth_getBalance", params: [TARGET, hex(block)] }]);
    expect(String(pruned[0])).toMatch(/BlockOutOfRange/);
    const answer = await balanceAt(endpoint, hex(block));
    expect(answer.error, `block ${block}`).toBeUndefined();
    expect(answer.result).toBe("0x1");
  }
  // Inside a batch too.
  const batch = await post<Answer[]>(endpoint, [
    { jsonrpc: "2.0", id: "edge", method: "eth_getBalance", params: [TARGET, hex(edge)] },
    { jsonrpc: "2.0", id: "beyond", method: "eth_getBalance", params: [TARGET, hex(beyondMargin)] },
    { jsonrpc: "2.0", id: "now", method: "eth_getBalance", params: [TARGET, "latest"] },
  ]);
  expect(batch).toEqual([
    { jsonrpc: "2.0", id: "edge", result: "0x1" },
    { jsonrpc: "2.0", id: "beyond", result: "0x1" },
    { jsonrpc: "2.0", id: "now", result: "0x3" },
  ]);
}, 60_000);
