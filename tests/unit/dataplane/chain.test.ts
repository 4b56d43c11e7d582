// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the networks file's ${VAR} syntax is what these tests are about
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  loadCatalogueNetworks,
  localChainWanted,
  planNetworks,
  startChainNodes,
} from "../../../server/dataplane/chain/nodes.ts";

const rootDir = path.resolve(import.meta.dirname, "../../..");
const catalogue = loadCatalogueNetworks(rootDir);

describe("network plan", () => {
  it("a configured upstream wins over a local node; a missing ${VAR} means not configured", () => {
    const plan = planNetworks(
      {
        local: { networks: ["ethereum-sepolia", "base-sepolia"], blockTimeSeconds: 3 },
        upstreams: {
          "base-sepolia": { http: "https://base.example/${KEY}", ws: "wss://base.example/${KEY}" },
          "polygon-amoy": { http: "${UNSET_URL}" },
        },
      },
      catalogue,
      { KEY: "k1" },
    );
    expect(plan.upstreams).toEqual([
      {
        network: "base-sepolia",
        chainId: 84532,
        httpUrl: "https://base.example/k1",
        wsUrl: "wss://base.example/k1",
        source: "upstream",
      },
    ]);
    expect(plan.local).toEqual([{ network: "ethereum-sepolia", chainId: 11155111 }]);
    expect(plan.blockTimeSeconds).toBe(3);
  });

  it('"*" means every EVM network; non-EVM and unknown networks are configuration errors', () => {
    const all = planNetworks({ local: { networks: "*" } }, catalogue, {});
    expect(all.local.length).toBe(catalogue.filter((n) => n.chainCompatibility === "evm").length);
    expect(() => planNetworks({ local: { networks: ["solana-mainnet"] } }, catalogue, {})).toThrow(
      /not an EVM network/,
    );
    expect(() => planNetworks({ upstreams: { "moon-mainnet": { http: "http://x" } } }, catalogue, {})).toThrow(
      /unknown network/,
    );
  });

  it("local nodes start by default, not under tests unless asked", () => {
    expect(localChainWanted({})).toBe(true);
    expect(localChainWanted({ NODEPLANE_LOCAL_CHAIN: "0" })).toBe(false);
    expect(localChainWanted({ NODE_ENV: "test" })).toBe(false);
    expect(localChainWanted({ NODE_ENV: "test", NODEPLANE_LOCAL_CHAIN: "1" })).toBe(true);
  });
});

describe("startChainNodes", () => {
  it("runs an anvil per local network with its real chain id, mining blocks, and stops them", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "nodeplane-chain-"));
    const file = path.join(dir, "networks.json");
    writeFileSync(
      file,
      JSON.stringify({ local: { networks: ["ethereum-sepolia", "polygon-amoy"], blockTimeSeconds: 1 } }),
    );
    const nodes = await startChainNodes({ rootDir }, { env: { NODEPLANE_NETWORKS_CONFIG: file } });
    const rpc = async (url: string, method: string) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
      });
      return ((await res.json()) as { result: string }).result;
    };
    try {
      const sepolia = nodes.get("ethereum-sepolia");
      const amoy = nodes.get("polygon-amoy");
      expect(sepolia?.source).toBe("local");
      expect(await rpc(sepolia?.httpUrl as string, "eth_chainId")).toBe("0xaa36a7");
      expect(Number(await rpc(amoy?.httpUrl as string, "eth_chainId"))).toBe(80002);
      expect(nodes.get("ethereum-mainnet")).toBeUndefined();
      const first = Number(await rpc(sepolia?.httpUrl as string, "eth_blockNumber"));
      await new Promise((r) => setTimeout(r, 2200));
      expect(Number(await rpc(sepolia?.httpUrl as string, "eth_blockNumber"))).toBeGreaterThan(first);
    } finally {
      await nodes.stop();
    }
    await expect(
      fetch(nodes.get("ethereum-sepolia")?.httpUrl as string, { method: "POST", body: "{}" }),
    ).rejects.toThrow();
  }, 30_000);
});
