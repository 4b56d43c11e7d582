/**
 * A token index against a real anvil and a fresh PostgreSQL database, with the test contract set
 * deployed, and the chain's own answers (balanceOf, ownerOf, eth_getLogs decoded by viem) to compare the
 * index's with.
 */
import { tmpdir } from "node:os";
import path from "node:path";
import { type Abi, decodeEventLog, decodeFunctionResult, encodeFunctionData, type Hex } from "viem";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { compileTestTokens, type TestTokenContracts } from "../../server/dataplane/token-index/compile.ts";
import { TokenIndexer, type TokenIndexerOptions } from "../../server/dataplane/token-index/indexer.ts";
import { type TokenMethod, tokenMethods } from "../../server/dataplane/token-index/methods.ts";
import type { TokenIndexStore } from "../../server/dataplane/token-index/store.ts";
import { deployTestTokens, type TestTokenSet } from "../../server/dataplane/token-index/test-tokens.ts";
import { databaseTokenIndexStore } from "../../server/domains/token-index/index-store.ts";
import { type Db, openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

export const NETWORK = "ethereum-mainnet";
/** Where compiled test contracts are kept between runs (compiling takes seconds). */
export const SOLC_CACHE = path.join(tmpdir(), "nodeplane-solc");

export interface TokenIndexHarness {
  anvil: AnvilNode;
  rpc: RpcClient;
  db: Db;
  store: TokenIndexStore;
  contracts: TestTokenContracts;
  set: TestTokenSet;
  methods: ReadonlyMap<string, TokenMethod>;
  call(method: string, params: unknown): Promise<unknown>;
  indexer(options?: Partial<TokenIndexerOptions>): TokenIndexer;
  close(): Promise<void>;
}

export const quietLog = { info: () => undefined, warn: () => undefined };

export async function startTokenIndexHarness(): Promise<TokenIndexHarness> {
  const database: TestDatabase = await createTestDatabase();
  const db = openDatabase(database.url, 4);
  await runMigrations(db);
  const anvil = await startAnvil({ chainId: 1 });
  const rpc = new RpcClient(anvil.httpUrl);
  const set = await deployTestTokens(rpc, SOLC_CACHE);
  const contracts = compileTestTokens(SOLC_CACHE);
  const store = databaseTokenIndexStore(db.$client);
  const methods = tokenMethods(store);
  const upstreams = staticUpstreams([
    { network: NETWORK, chainId: 1, httpUrl: anvil.httpUrl, wsUrl: anvil.wsUrl, source: "local" },
  ]);
  const indexers: TokenIndexer[] = [];
  return {
    anvil,
    rpc,
    db,
    store,
    contracts,
    set,
    methods,
    call: (method, params) => {
      const handler = methods.get(method);
      if (!handler) throw new Error(`no method ${method}`);
      return handler(params, { network: NETWORK });
    },
    indexer(options = {}) {
      const indexer = new TokenIndexer({ store, upstreams, networks: [NETWORK], log: quietLog, ...options });
      indexers.push(indexer);
      return indexer;
    },
    async close() {
      await Promise.all(indexers.map((i) => i.stop()));
      await rpc.close();
      await anvil.stop();
      await db.$client.end();
      await database.drop();
    },
  };
}

/** A read-only call of `fn` on `to`, decoded. */
export async function readContract<T>(rpc: RpcClient, abi: Abi, to: string, fn: string, args: unknown[]): Promise<T> {
  const data = encodeFunctionData({ abi, functionName: fn, args });
  const result = await rpc.call<Hex>("eth_call", [{ to, data }, "latest"]);
  return decodeFunctionResult({ abi, functionName: fn, data: result }) as T;
}

/** ERC-20 quantities in and out per `${owner}|${token}`, summed from the chain's logs as viem decodes them. */
export async function fungibleFlowsFromLogs(h: TokenIndexHarness): Promise<Map<string, { in: bigint; out: bigint }>> {
  const flows = new Map<string, { in: bigint; out: bigint }>();
  const logs = await h.rpc.call<{ address: string; topics: Hex[]; data: Hex }[]>("eth_getLogs", [
    { fromBlock: "0x0", toBlock: "latest", address: h.set.erc20 },
  ]);
  for (const log of logs) {
    const event = decodeEventLog({ abi: h.contracts.TestERC20.abi, data: log.data, topics: log.topics as [Hex] });
    if (event.eventName !== "Transfer") continue;
    const { from, to, value } = event.args as unknown as { from: string; to: string; value: bigint };
    const token = log.address.toLowerCase();
    const add = (owner: string, key: "in" | "out") => {
      if (/^0x0{40}$/.test(owner)) return;
      const k = `${owner.toLowerCase()}|${token}`;
      const f = flows.get(k) ?? { in: 0n, out: 0n };
      f[key] += value;
      flows.set(k, f);
    };
    add(to, "in");
    add(from, "out");
  }
  return flows;
}
