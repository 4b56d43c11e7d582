// The Token API and NFT API add-ons at the proxy: their methods are answered by the service from its
// token index (never forwarded: the node does not know them), equal to what the chain's contracts say,
// counted per add-on with its credit multiplier; refused naming the add-on on an endpoint without it,
// over HTTP and WebSocket, in the process that answered the removal and in another service process.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { compileTestTokens, type TestTokenContracts } from "../../server/dataplane/token-index/compile.ts";
import { deployTestTokens, type TestTokenSet } from "../../server/dataplane/token-index/test-tokens.ts";
import { type GqlClient, signUp, startTestApp, type TestApp } from "../support/api.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";
import { readContract, SOLC_CACHE } from "./token-index-harness.ts";

const NETWORK = "ethereum-mainnet";
let app: TestApp;
let other: ServiceProcess;
let networksDir = "";
let rpc: RpcClient;
let set: TestTokenSet;
let contracts: TestTokenContracts;

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

beforeAll(async () => {
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-addon-methods-"));
  const ownChain = join(networksDir, "local.json");
  writeFileSync(ownChain, JSON.stringify({ local: { networks: [NETWORK], blockTimeSeconds: 1 } }));
  // startChainNodes reads the process's environment.
  const saved = { local: process.env.NODEPLANE_LOCAL_CHAIN, networks: process.env.NODEPLANE_NETWORKS_CONFIG };
  process.env.NODEPLANE_LOCAL_CHAIN = "1";
  process.env.NODEPLANE_NETWORKS_CONFIG = ownChain;
  try {
    // As `npm start` runs: the seed deploys the test tokens on the local chain and the index follows it.
    app = await startTestApp({ NODEPLANE_SEED_TEST_TOKENS: "1" });
  } finally {
    restoreEnv("NODEPLANE_LOCAL_CHAIN", saved.local);
    restoreEnv("NODEPLANE_NETWORKS_CONFIG", saved.networks);
  }
  const upstream = app.services.upstreams.get(NETWORK);
  if (!upstream) throw new Error("no local node");
  rpc = new RpcClient(upstream.httpUrl);
  // A proxy-only process of the same deployment: the same database, the same node as its upstream.
  const sameNode = join(networksDir, "upstream.json");
  writeFileSync(
    sameNode,
    JSON.stringify({
      local: { networks: [] },
      upstreams: { [NETWORK]: { http: upstream.httpUrl, ws: upstream.wsUrl } },
    }),
  );
  other = await startServiceProcess({
    DATABASE_URL: app.database.url,
    NODEPLANE_ROLES: "proxy",
    NODEPLANE_LOCAL_CHAIN: "0",
    NODEPLANE_NETWORKS_CONFIG: sameNode,
  });
  contracts = compileTestTokens(SOLC_CACHE);
  // The seed deploys and transfers in the background, one block a second: wait for its last round (the
  // first holder sends six transfers in it, the second one), then read where its contracts are (a chain
  // that has the set deploys nothing: deployTestTokens only answers their addresses).
  const accounts = (await rpc.call<string[]>("eth_accounts")).map((a) => a.toLowerCase());
  const [a, b] = accounts.slice(accounts.length - 4);
  const sent = async (from: string) =>
    Number.parseInt(await rpc.call<string>("eth_getTransactionCount", [from, "latest"]), 16);
  const deadline = Date.now() + 60_000;
  while ((await sent(a)) < 6 || (await sent(b)) < 1) {
    if (Date.now() > deadline) throw new Error("the seed did not finish its transfers within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const found = await deployTestTokens(rpc, SOLC_CACHE);
  if (found.deployed) throw new Error("the seed had not deployed the test tokens");
  set = found;
}, 180_000);

afterAll(async () => {
  await other?.stop();
  await rpc?.close();
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
  error?: { code: number; message: string; data?: { addon?: string; argument?: string } };
}

async function newEndpoint(client: GqlClient): Promise<Endpoint> {
  const data = await client.gqlOk<{ createEndpoint: Endpoint }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "${NETWORK}" }) { id exId initialToken } }`,
  );
  return data.createEndpoint;
}

async function post<T>(base: string, endpoint: Endpoint, body: unknown): Promise<T> {
  const res = await fetch(`${base}/rpc/${endpoint.exId}/${endpoint.initialToken}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const call = (base: string, endpoint: Endpoint, method: string, params: unknown) =>
  post<Answer>(base, endpoint, { jsonrpc: "2.0", id: 7, method, params });

const refusedNaming = (answer: Answer, addon: string) =>
  answer.error?.code === -32009 && answer.error.message.includes(addon) && answer.error.data?.addon === addon;

async function install(client: GqlClient, endpoint: Endpoint, planId: string): Promise<string> {
  const { installAddon } = await client.gqlOk<{ installAddon: { id: string } }>(
    `mutation($e: ID!, $p: ID!) { installAddon(input: { endpointId: $e, planId: $p }) { id } }`,
    { e: endpoint.id, p: planId },
  );
  return installAddon.id;
}

type WalletTokens = { address: string; result: { address: string; symbol: string; totalBalance: string }[] };

/** The holder's ERC-20 balances as the chain's contracts say them, by token address. */
async function balancesOnChain(holder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const token of set.erc20) {
    const balance = await readContract<bigint>(rpc, contracts.TestERC20.abi, token, "balanceOf", [holder]);
    if (balance > 0n) out[token] = balance.toString();
  }
  return out;
}

const balancesAnswered = (answer: Answer): Record<string, string> =>
  Object.fromEntries(
    ((answer.result as WalletTokens | undefined)?.result ?? [])
      .filter((r) => r.totalBalance !== "0")
      .map((r) => [r.address, r.totalBalance]),
  );

/** Sends messages on one WebSocket and collects one reply per message, in order. */
async function overWebSocket(base: string, endpoint: Endpoint, messages: unknown[]): Promise<unknown[]> {
  const ws = new WebSocket(`${base.replace("http", "ws")}/rpc/${endpoint.exId}/${endpoint.initialToken}`);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  try {
    const replies: unknown[] = [];
    for (const m of messages) {
      const reply = new Promise<unknown>((resolve) => ws.once("message", (data) => resolve(JSON.parse(String(data)))));
      ws.send(JSON.stringify(m));
      replies.push(await reply);
    }
    return replies;
  } finally {
    ws.close();
  }
}

describe("token and NFT add-on methods at the proxy", () => {
  it("answered from the index once installed (equal to the contracts), over HTTP and WebSocket, in batches in order; refused once removed, in both processes", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    const [holder] = set.holders;
    const walletCall = { wallet: holder };

    // Not installed: refused naming the add-on, here and in the other process, over HTTP and WebSocket.
    expect(refusedNaming(await call(app.url, endpoint, "qn_getWalletTokenBalance", [walletCall]), "Token API")).toBe(
      true,
    );
    expect(refusedNaming(await call(other.url, endpoint, "alchemy_getTokenBalances", [holder]), "Token API")).toBe(
      true,
    );
    expect(refusedNaming(await call(app.url, endpoint, "qn_fetchNFTs", [walletCall]), "NFT API")).toBe(true);
    expect(
      refusedNaming(
        await call(app.url, endpoint, "alchemy_getOwnersForContract", [{ contractAddress: set.erc721 }]),
        "NFT API",
      ),
    ).toBe(true);
    const [wsRefused] = await overWebSocket(app.url, endpoint, [
      { jsonrpc: "2.0", id: 1, method: "qn_getWalletTokenBalance", params: [walletCall] },
    ]);
    expect(refusedNaming(wsRefused as Answer, "Token API")).toBe(true);

    const tokenInstall = await install(user.client, endpoint, "token-api-growth");
    await install(user.client, endpoint, "nft-api-growth");

    // The seed's transfers land a block a second; the index follows the tip. Until it has them all, the
    // answer differs from the contracts; then it equals them.
    const onChain = await balancesOnChain(holder);
    expect(Object.keys(onChain)).toHaveLength(2);
    await expect
      .poll(async () => balancesAnswered(await call(app.url, endpoint, "qn_getWalletTokenBalance", [walletCall])), {
        timeout: 30_000,
        interval: 250,
      })
      .toEqual(onChain);
    // The other process has the install from the events relay within 2 s (as for the removal below); the
    // index it reads is the same.
    let otherAnswer = await call(other.url, endpoint, "qn_getWalletTokenBalance", [walletCall]);
    for (const deadline = performance.now() + 2000; refusedNaming(otherAnswer, "Token API"); ) {
      if (performance.now() > deadline) break;
      otherAnswer = await call(other.url, endpoint, "qn_getWalletTokenBalance", [walletCall]);
    }
    expect(balancesAnswered(otherAnswer), `the other process answered ${JSON.stringify(otherAnswer)}`).toEqual(onChain);
    expect((otherAnswer.result as WalletTokens).result.map((r) => r.symbol).sort()).toEqual(["NTT", "NTUSD"]);

    const alchemy = await call(app.url, endpoint, "alchemy_getTokenBalances", [holder, set.erc20]);
    expect(alchemy.result).toEqual({
      address: holder,
      tokenBalances: set.erc20.map((token) => ({
        contractAddress: token,
        tokenBalance: `0x${BigInt(onChain[token]).toString(16).padStart(64, "0")}`,
      })),
    });

    // The ERC-721 collection's owners and ids, against ownerOf on the contract.
    type Owners = { owners: { ownerAddress: string; tokenBalances: { tokenId: string; balance: string }[] }[] };
    const owners = await call(app.url, endpoint, "alchemy_getOwnersForContract", [
      { contractAddress: set.erc721, withTokenBalances: true },
    ]);
    const held = (owners.result as Owners).owners.flatMap((o) =>
      o.tokenBalances.map((t) => [t.tokenId, o.ownerAddress] as const),
    );
    expect(held.map(([id]) => id).sort()).toEqual(["1", "2", "3", "4", "5"]);
    for (const [id, owner] of held) {
      const onChainOwner = await readContract<string>(rpc, contracts.TestERC721.abi, set.erc721, "ownerOf", [
        BigInt(id),
      ]);
      expect(onChainOwner.toLowerCase(), `ownerOf(${id})`).toBe(owner);
    }
    type Nfts = { assets: { collectionAddress: string; collectionTokenId: string; quantity: string }[] };
    const nfts = await call(app.url, endpoint, "qn_fetchNFTs", [{ wallet: holder, contracts: [set.erc721] }]);
    expect((nfts.result as Nfts).assets.map((a) => a.collectionTokenId)).toEqual(
      held.filter(([, owner]) => owner === holder).map(([id]) => id),
    );
    type Collection = { tokens: { collectionTokenId: string }[]; totalItems: number };
    const collection = await call(app.url, endpoint, "qn_fetchNFTsByCollection", [{ collection: set.erc721 }]);
    expect((collection.result as Collection).tokens.map((t) => t.collectionTokenId)).toEqual(["1", "2", "3", "4", "5"]);

    // A bad argument is the method's invalid-params error naming it, not the node's.
    const bad = await call(app.url, endpoint, "qn_getWalletTokenBalance", [{ wallet: "0x12" }]);
    expect(bad.error).toMatchObject({ code: -32602, data: { argument: "wallet" } });

    // A batch mixing the node's methods and the index's: one answer per call, in the calls' order.
    const batch = [
      { jsonrpc: "2.0", id: "a", method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: "b", method: "qn_getWalletTokenBalance", params: [walletCall] },
      { jsonrpc: "2.0", id: "c", method: "eth_getBalance", params: [holder, "latest"] },
      { jsonrpc: "2.0", id: "d", method: "alchemy_getTokenBalances", params: [holder, set.erc20] },
    ];
    const checkBatch = (answers: Answer[]) => {
      expect(answers.map((a) => a.id)).toEqual(["a", "b", "c", "d"]);
      expect(answers[0].result, JSON.stringify(answers)).toBe("0x1");
      expect(balancesAnswered(answers[1])).toEqual(onChain);
      expect(answers[2].result).toMatch(/^0x[0-9a-f]+$/);
      expect(answers[3].result).toEqual(alchemy.result);
    };
    // The account's plan allows 15 calls a second (each call of a batch counts): a second between groups.
    const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1100));
    await nextSecond();
    checkBatch(await post<Answer[]>(app.url, endpoint, batch));
    checkBatch(await post<Answer[]>(other.url, endpoint, batch));
    await nextSecond();
    const [wsSingle, wsBatch] = await overWebSocket(app.url, endpoint, [
      { jsonrpc: "2.0", id: 1, method: "qn_getWalletTokenBalance", params: [walletCall] },
      batch,
    ]);
    expect(balancesAnswered(wsSingle as Answer)).toEqual(onChain);
    checkBatch(wsBatch as Answer[]);

    // Removed at once: refused again here at the next call, and in the other process within 2 s.
    await user.client.gqlOk(`mutation($id: ID!) { deactivateAddOnImmediately(accountAddOnId: $id) { id } }`, {
      id: tokenInstall,
    });
    expect(refusedNaming(await call(app.url, endpoint, "qn_getWalletTokenBalance", [walletCall]), "Token API")).toBe(
      true,
    );
    const deadline = performance.now() + 2000;
    for (;;) {
      const answer = await call(other.url, endpoint, "qn_getWalletTokenBalance", [walletCall]);
      if (refusedNaming(answer, "Token API")) break;
      if (performance.now() > deadline) throw new Error(`the other process still answers ${JSON.stringify(answer)}`);
    }
    // The NFT API stays installed.
    expect((await call(app.url, endpoint, "qn_fetchNFTs", [walletCall])).result).toBeDefined();
  }, 90_000);

  it("the index's answers are counted per add-on with its credit multiplier", async () => {
    const user = await signUp(app);
    const endpoint = await newEndpoint(user.client);
    await install(user.client, endpoint, "token-api-growth");
    const [holder] = set.holders;
    for (let i = 0; i < 3; i++)
      expect((await call(app.url, endpoint, "qn_getWalletTokenBalance", [{ wallet: holder }])).result).toBeDefined();
    await post(app.url, endpoint, [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: 2, method: "alchemy_getTokenBalances", params: [holder] },
    ]);
    type Counts = { addonSlug: string; requests: number; credits: number; refused: number }[];
    // Ethereum's base credit is 1; the Token API's multiplier is 2 (schemas/catalogue/addons.json).
    await expect
      .poll(
        async () =>
          (
            await user.client.gqlOk<{ usage: { addonUsages: Counts } }>(
              "{ usage(pastDay: true) { addonUsages { addonSlug requests credits refused } } }",
            )
          ).usage.addonUsages,
        { timeout: 10_000, interval: 200 },
      )
      .toEqual([{ addonSlug: "token-api", requests: 4, credits: 8, refused: 0 }]);
  }, 30_000);
});
