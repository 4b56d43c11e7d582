// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the networks file's ${VAR} syntax is what these tests are about
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { KEPT_STATES, startAnvil } from "../../../server/dataplane/chain/anvil.ts";
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

  it("a local node keeps the state of its last blocks in memory and writes none to disk", async () => {
    const stateDir = path.join(homedir(), ".foundry", "anvil", "tmp");
    const before = new Set(existsSync(stateDir) ? readdirSync(stateDir) : []);
    const node = await startAnvil({ chainId: 31337 });
    const rpc = async (method: string, params: unknown[]) => {
      const res = await fetch(node.httpUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return (await res.json()) as { result?: string; error?: { message: string } };
    };
    try {
      // Past anvil's in-memory limit, where it would otherwise write each older state to disk.
      await rpc("anvil_mine", ["0x200"]);
      const dev = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
      expect((await rpc("eth_getBalance", [dev, `0x${(512 - KEPT_STATES + 2).toString(16)}`])).result).toMatch(/^0x/);
      expect((await rpc("eth_getBalance", [dev, "0x1"])).error?.message).toBeTruthy();
      expect((await rpc("eth_getBlockByNumber", ["0x1", false])).result).toBeTruthy();
    } finally {
      await node.stop();
    }
    const written = (existsSync(stateDir) ? readdirSync(stateDir) : []).filter((d) => !before.has(d));
    expect(written).toEqual([]);
  }, 60_000);

  it("a local chain keeps its blocks across a restart: a block mined before is there after, the tip goes on from it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "nodeplane-chain-state-"));
    const file = path.join(dir, "networks.json");
    // Mined on demand only (a long block time), so the test decides which blocks exist.
    writeFileSync(file, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 3600 } }));
    const stateDir = path.join(dir, "chains");
    const start = () => startChainNodes({ rootDir }, { env: { NODEPLANE_NETWORKS_CONFIG: file }, stateDir });
    const rpc = async (url: string, method: string, params: unknown[] = []) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await res.json()) as { result: { hash: string } & string }).result;
    };

    const first = await start();
    const firstUrl = first.get("ethereum-sepolia")?.httpUrl as string;
    let tip: number;
    let minedHash: string;
    try {
      await rpc(firstUrl, "anvil_mine", ["0x5"]);
      tip = Number(await rpc(firstUrl, "eth_blockNumber"));
      minedHash = (await rpc(firstUrl, "eth_getBlockByNumber", [`0x${tip.toString(16)}`, false])).hash;
    } finally {
      await first.stop();
    }
    expect(tip).toBeGreaterThanOrEqual(5);
    expect(existsSync(path.join(stateDir, "ethereum-sepolia.json"))).toBe(true);

    const second = await start();
    const secondUrl = second.get("ethereum-sepolia")?.httpUrl as string;
    try {
      expect(Number(await rpc(secondUrl, "eth_blockNumber"))).toBeGreaterThanOrEqual(tip);
      expect((await rpc(secondUrl, "eth_getBlockByNumber", [`0x${tip.toString(16)}`, false])).hash).toBe(minedHash);
      await rpc(secondUrl, "anvil_mine", ["0x1"]);
      expect(Number(await rpc(secondUrl, "eth_blockNumber"))).toBeGreaterThan(tip);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it("a node left running by a killed service is stopped, its state saved, before a new one takes its file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "nodeplane-chain-state-"));
    const file = path.join(dir, "networks.json");
    writeFileSync(file, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 3600 } }));
    const stateDir = path.join(dir, "chains");
    const pidFile = path.join(stateDir, "ethereum-sepolia.json.pid");
    const lines: string[] = [];
    const start = () =>
      startChainNodes({ rootDir }, { env: { NODEPLANE_NETWORKS_CONFIG: file }, stateDir, log: (l) => lines.push(l) });
    const rpc = async (url: string, method: string, params: unknown[] = []) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await res.json()) as { result: string }).result;
    };
    // The first service "dies": its node is never stopped and keeps its state file.
    const abandoned = await start();
    const orphan = Number(readFileSync(pidFile, "utf8"));
    await rpc(abandoned.get("ethereum-sepolia")?.httpUrl as string, "anvil_mine", ["0x7"]);
    const second = await start();
    try {
      expect(() => process.kill(orphan, 0)).toThrow();
      expect(lines.join("\n")).toContain(`stopping a chain node a previous run left behind (pid ${orphan})`);
      // What the orphan had mined was saved when it was stopped, and the new node goes on from it.
      expect(
        Number(await rpc(second.get("ethereum-sepolia")?.httpUrl as string, "eth_blockNumber")),
      ).toBeGreaterThanOrEqual(7);
      expect(Number(readFileSync(pidFile, "utf8"))).not.toBe(orphan);
    } finally {
      await second.stop();
    }
    expect(existsSync(pidFile)).toBe(false);
  }, 90_000);

  it("a state file anvil cannot load is set aside and the chain starts afresh", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "nodeplane-chain-state-"));
    const file = path.join(dir, "networks.json");
    writeFileSync(file, JSON.stringify({ local: { networks: ["ethereum-sepolia"], blockTimeSeconds: 3600 } }));
    const stateDir = path.join(dir, "chains");
    mkdirSync(stateDir);
    writeFileSync(path.join(stateDir, "ethereum-sepolia.json"), '{"block":');
    const lines: string[] = [];
    const nodes = await startChainNodes(
      { rootDir },
      { env: { NODEPLANE_NETWORKS_CONFIG: file }, stateDir, log: (line) => lines.push(line) },
    );
    try {
      expect(nodes.get("ethereum-sepolia")?.source).toBe("local");
      expect(readdirSync(stateDir).some((name) => name.startsWith("ethereum-sepolia.json.unreadable-"))).toBe(true);
      expect(lines.join("\n")).toMatch(/could not be loaded/);
    } finally {
      await nodes.stop();
    }
  }, 60_000);
});
