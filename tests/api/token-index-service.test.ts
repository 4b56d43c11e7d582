/**
 * The service as `npm start` runs it: its local chain gets the test contract set from the seed, and its
 * token index follows that chain on its own, so the token methods answer what the contracts say.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { compileTestTokens } from "../../server/dataplane/token-index/compile.ts";
import { startTestApp, type TestApp } from "../support/api.ts";
import { readContract, SOLC_CACHE } from "./token-index-harness.ts";

const NETWORK = "ethereum-mainnet";
let app: TestApp;
let networksDir = "";

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

beforeAll(async () => {
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-token-index-"));
  const networksConfig = join(networksDir, "networks.json");
  writeFileSync(networksConfig, JSON.stringify({ local: { networks: [NETWORK], blockTimeSeconds: 1 } }));
  // startChainNodes reads the process's environment.
  const saved = { local: process.env.NODEPLANE_LOCAL_CHAIN, networks: process.env.NODEPLANE_NETWORKS_CONFIG };
  process.env.NODEPLANE_LOCAL_CHAIN = "1";
  process.env.NODEPLANE_NETWORKS_CONFIG = networksConfig;
  try {
    app = await startTestApp({ NODEPLANE_SEED_TEST_TOKENS: "1" });
  } finally {
    restoreEnv("NODEPLANE_LOCAL_CHAIN", saved.local);
    restoreEnv("NODEPLANE_NETWORKS_CONFIG", saved.networks);
  }
}, 60_000);

afterAll(async () => {
  await app?.close();
  if (networksDir) rmSync(networksDir, { recursive: true, force: true });
});

it("seeds its local chain with the test tokens and indexes them on its own", async () => {
  const upstream = app.services.upstreams.get(NETWORK);
  if (!upstream) throw new Error("no local node");
  const rpc = new RpcClient(upstream.httpUrl);
  try {
    const accounts = await rpc.call<string[]>("eth_accounts");
    // The seed's last holder: it receives both tokens only in the seed's second round of transfers.
    const holder = accounts[accounts.length - 2].toLowerCase();
    const method = app.services.tokenMethods.get("qn_getWalletTokenBalance");
    if (!method) throw new Error("no qn_getWalletTokenBalance");
    type Answer = { result: { address: string; symbol: string; totalBalance: string }[] };
    // The seed deploys and transfers in the background, one block a second; the index follows.
    await expect
      .poll(async () => ((await method([{ wallet: holder }], { network: NETWORK })) as Answer).result.length, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe(2);
    const erc20 = compileTestTokens(SOLC_CACHE).TestERC20.abi;
    const answer = (await method([{ wallet: holder }], { network: NETWORK })) as Answer;
    for (const row of answer.result) {
      const onChain = await readContract<bigint>(rpc, erc20, row.address, "balanceOf", [holder]);
      expect(BigInt(row.totalBalance), row.symbol).toBe(onChain);
    }
    expect(answer.result.map((r) => r.symbol).sort()).toEqual(["NTT", "NTUSD"]);
  } finally {
    await rpc.close();
  }
}, 60_000);
