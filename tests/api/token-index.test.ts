import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NewHeads } from "../../server/dataplane/chain/heads.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { InvalidParams } from "../../server/dataplane/token-index/methods.ts";
import { contractCall, sendTransactions } from "../../server/dataplane/token-index/test-tokens.ts";
import {
  fungibleFlowsFromLogs,
  NETWORK,
  quietLog,
  readContract,
  startTokenIndexHarness,
  type TokenIndexHarness,
} from "./token-index-harness.ts";

/**
 * The token index against the chain: what the add-on methods answer equals what the contracts say
 * (balanceOf, ownerOf) and what the logs say (eth_getLogs decoded by viem), also after reorgs made with
 * evm_snapshot/evm_revert and anvil_reorg; a new indexer resumes from the stored cursor.
 */
let h: TokenIndexHarness;
const reorgLines: string[] = [];
const log = {
  info: (_o: object, m?: string) => {
    if (m?.includes("reorg")) reorgLines.push(m);
  },
  warn: quietLog.warn,
};

beforeAll(async () => {
  h = await startTokenIndexHarness();
});

afterAll(async () => {
  await h?.close();
});

interface QnBalances {
  address: string;
  result: {
    address: string;
    totalBalance: string;
    quantityIn: string;
    quantityOut: string;
    decimals: string | null;
    symbol: string | null;
  }[];
  totalItems: number;
  totalPages: number;
  pageNumber: number;
}

interface QnNfts {
  assets: { collectionAddress: string; collectionTokenId: string; quantity: string }[];
  totalItems: number;
}

/** Every wallet the test moves tokens between. */
const wallets = () => [...h.set.holders, h.set.deployer];

/** Compares every answer of the index with the chain's own state and logs. */
async function expectIndexEqualsChain(): Promise<void> {
  const erc20 = h.contracts.TestERC20.abi;
  const flows = await fungibleFlowsFromLogs(h);
  for (const wallet of wallets()) {
    const qn = (await h.call("qn_getWalletTokenBalance", [{ wallet, perPage: 100 }])) as QnBalances;
    const alchemy = (await h.call("alchemy_getTokenBalances", [wallet])) as {
      tokenBalances: { contractAddress: string; tokenBalance: string }[];
    };
    for (const token of h.set.erc20) {
      const onChain = await readContract<bigint>(h.rpc, erc20, token, "balanceOf", [wallet]);
      const row = qn.result.find((r) => r.address === token);
      expect(BigInt(row?.totalBalance ?? 0), `${wallet} ${token}`).toBe(onChain);
      const flow = flows.get(`${wallet}|${token}`) ?? { in: 0n, out: 0n };
      expect(BigInt(row?.quantityIn ?? 0)).toBe(flow.in);
      expect(BigInt(row?.quantityOut ?? 0)).toBe(flow.out);
      const hex = alchemy.tokenBalances.find((b) => b.contractAddress === token)?.tokenBalance;
      expect(BigInt(hex ?? 0)).toBe(onChain);
    }
    // What the wallet holds of the NFT contracts, as the contracts say it.
    const held = new Map<string, bigint>();
    for (let id = 1n; id <= 5n; id++) {
      const owner = await readContract<string>(h.rpc, h.contracts.TestERC721.abi, h.set.erc721, "ownerOf", [id]);
      if (owner.toLowerCase() === wallet) held.set(`${h.set.erc721}:${id}`, 1n);
    }
    for (const id of [1n, 2n]) {
      const amount = await readContract<bigint>(h.rpc, h.contracts.TestERC1155.abi, h.set.erc1155, "balanceOf", [
        id,
        wallet,
      ]);
      if (amount > 0n) held.set(`${h.set.erc1155}:${id}`, amount);
    }
    const nfts = (await h.call("qn_fetchNFTs", [{ wallet, perPage: 40 }])) as QnNfts;
    expect(
      new Map(nfts.assets.map((a) => [`${a.collectionAddress}:${a.collectionTokenId}`, BigInt(a.quantity)])),
      wallet,
    ).toEqual(held);
    expect(nfts.totalItems).toBe(held.size);
  }
  // The collection's owners, as ownerOf says them.
  const owners = new Map<string, string[]>();
  for (let id = 1n; id <= 5n; id++) {
    const owner = (
      await readContract<string>(h.rpc, h.contracts.TestERC721.abi, h.set.erc721, "ownerOf", [id])
    ).toLowerCase();
    owners.set(owner, [...(owners.get(owner) ?? []), String(id)]);
  }
  const answer = (await h.call("alchemy_getOwnersForContract", [
    { contractAddress: h.set.erc721, withTokenBalances: true },
  ])) as { owners: { ownerAddress: string; tokenBalances: { tokenId: string; balance: string }[] }[] };
  expect(new Map(answer.owners.map((o) => [o.ownerAddress, o.tokenBalances.map((b) => b.tokenId)]))).toEqual(owners);
}

describe("token index", () => {
  it("holds the balances and NFTs the chain's contracts and logs say, read in several ranges", async () => {
    const ranges: number[] = [];
    // Small ranges: the seed's blocks take several reads, each read ahead while the previous is written.
    const indexer = h.indexer({ maxRangeBlocks: 3, onRange: (r) => ranges.push(r.from) });
    await indexer.catchUp(NETWORK);
    expect(ranges.length).toBeGreaterThan(3);
    await expectIndexEqualsChain();
    const [a] = h.set.holders;
    const qn = (await h.call("qn_getWalletTokenBalance", [{ wallet: a }])) as QnBalances;
    // Metadata read from the contracts.
    expect(qn.result.map((r) => [r.symbol, r.decimals]).sort()).toEqual([
      ["NTT", "18"],
      ["NTUSD", "6"],
    ]);
  });

  it("pages the way each provider does", async () => {
    const [a] = h.set.holders;
    const page2 = (await h.call("qn_getWalletTokenBalance", [{ wallet: a, page: 2, perPage: 1 }])) as QnBalances;
    expect(page2).toMatchObject({ totalItems: 2, totalPages: 2, pageNumber: 2 });
    expect(page2.result).toHaveLength(1);
    const page3 = (await h.call("qn_getWalletTokenBalance", [{ wallet: a, page: 3, perPage: 1 }])) as QnBalances;
    expect(page3).toMatchObject({ result: [], totalItems: 2, totalPages: 2, pageNumber: 3 });
    const first = (await h.call("alchemy_getTokenBalances", [a, "erc20", { maxCount: 1 }])) as {
      tokenBalances: { contractAddress: string }[];
      pageKey?: string;
    };
    expect(first.tokenBalances).toHaveLength(1);
    expect(first.pageKey).toBe(first.tokenBalances[0].contractAddress);
    const second = (await h.call("alchemy_getTokenBalances", [
      a,
      "erc20",
      { pageKey: first.pageKey, maxCount: 1 },
    ])) as {
      tokenBalances: { contractAddress: string }[];
      pageKey?: string;
    };
    expect(second.tokenBalances).toHaveLength(1);
    expect(second.tokenBalances[0].contractAddress).not.toBe(first.pageKey);
    expect(second.pageKey).toBeUndefined();
    const nftsPage = (await h.call("qn_fetchNFTs", [{ wallet: a, perPage: 2, page: 1 }])) as QnNfts;
    expect(nftsPage.assets).toHaveLength(2);
  });

  it("undoes a reorg made with evm_snapshot / evm_revert and reads the new chain", async () => {
    const indexer = h.indexer({ log });
    const [a, b, c] = h.set.holders;
    const erc20 = h.contracts.TestERC20.abi;
    const erc721 = h.contracts.TestERC721.abi;
    const snapshot = await h.rpc.call<string>("evm_snapshot");
    await sendTransactions(h.rpc, [
      contractCall(erc20, a, h.set.erc20[0], "transfer", [b, 1_000n]),
      contractCall(erc721, a, h.set.erc721, "transferFrom", [a, b, 1n]),
    ]);
    await indexer.catchUp(NETWORK);
    await expectIndexEqualsChain();
    const before = reorgLines.length;
    await h.rpc.call("evm_revert", [snapshot]);
    // The other branch is longer than the orphaned one: only the hashes tell the fork.
    await sendTransactions(h.rpc, [
      contractCall(erc20, a, h.set.erc20[0], "transfer", [c, 7n]),
      contractCall(erc721, a, h.set.erc721, "transferFrom", [a, c, 4n]),
      contractCall(erc20, b, h.set.erc20[1], "transfer", [a, 0n]),
    ]);
    await indexer.catchUp(NETWORK);
    expect(reorgLines.length).toBeGreaterThan(before);
    await expectIndexEqualsChain();
  });

  it("undoes a reorg made with anvil_reorg", async () => {
    const indexer = h.indexer({ log });
    const [a, b] = h.set.holders;
    const erc20 = h.contracts.TestERC20.abi;
    await sendTransactions(h.rpc, [
      contractCall(erc20, a, h.set.erc20[1], "transfer", [b, 3n]),
      contractCall(h.contracts.TestERC1155.abi, a, h.set.erc1155, "safeTransferFrom", [a, b, 2n, 1n, "0x"]),
    ]);
    await indexer.catchUp(NETWORK);
    await expectIndexEqualsChain();
    const before = reorgLines.length;
    // The last two blocks replaced by empty ones: their transfers never happened.
    await h.rpc.call("anvil_reorg", [2, []]);
    await indexer.catchUp(NETWORK);
    expect(reorgLines.length).toBeGreaterThan(before);
    await expectIndexEqualsChain();
  });

  it("resumes from its stored cursor after a restart, not from block 0", async () => {
    const cursor = await h.store.cursor(NETWORK);
    expect(cursor).not.toBeNull();
    const [a, b] = h.set.holders;
    await sendTransactions(h.rpc, [contractCall(h.contracts.TestERC20.abi, b, h.set.erc20[0], "transfer", [a, 11n])]);
    // A new indexer: nothing in memory, only what the database holds.
    const ranges: { from: number; to: number }[] = [];
    await h.indexer({ onRange: (r) => ranges.push(r) }).catchUp(NETWORK);
    expect(ranges[0].from).toBe((cursor?.block ?? 0) + 1);
    await expectIndexEqualsChain();
  });

  it("keeps up with the chain tip on its own, woken by pushed heads", async () => {
    const heads = new NewHeads({
      upstreams: staticUpstreams([
        { network: NETWORK, chainId: 1, httpUrl: h.anvil.httpUrl, wsUrl: h.anvil.wsUrl, source: "local" },
      ]),
      log: quietLog,
      pollMs: 600_000,
    });
    // Polls ten minutes apart: only a pushed head (one that came mid-catch-up included) can wake it in time.
    const indexer = h.indexer({ heads, pollMs: 600_000 });
    indexer.start();
    try {
      const [a, , c] = h.set.holders;
      await sendTransactions(h.rpc, [contractCall(h.contracts.TestERC20.abi, a, h.set.erc20[1], "transfer", [c, 5n])]);
      const onChain = await readContract<bigint>(h.rpc, h.contracts.TestERC20.abi, h.set.erc20[1], "balanceOf", [c]);
      await expect
        .poll(
          async () => {
            const qn = (await h.call("qn_getWalletTokenBalance", [
              { wallet: c, contracts: [h.set.erc20[1]] },
            ])) as QnBalances;
            return BigInt(qn.result[0]?.totalBalance ?? -1);
          },
          { timeout: 10_000, interval: 50 },
        )
        .toBe(onChain);
    } finally {
      await indexer.stop();
      heads.close();
    }
  });

  it("stores holders and tokens whatever characters a node put in their topics", async () => {
    // A range's arrays go to PostgreSQL as array literals; an element with a quote or a backslash (a node may
    // answer anything) must arrive as it was, beside plain ones. Its own network: the index above is untouched.
    const network = "quoted-topics";
    const odd = '0xab"c\\d{e},f';
    const plain = "0x00000000000000000000000000000000000000aa";
    const token = "0x00000000000000000000000000000000000000bb";
    const written = await h.store.commitRange({
      network,
      parent: null,
      end: { block: 1, hash: "0x01" },
      keepFrom: 0,
      effects: {
        fungible: new Map([
          [
            token,
            new Map<string, [bigint, bigint]>([
              [odd, [5n, 2n]],
              [plain, [7n, 0n]],
            ]),
          ],
        ]),
        nft: new Map([[`${token}|3|${odd}`, 1n]]),
      },
      newTokens: [],
    });
    expect(written).toBe(true);
    for (const [wallet, quantityIn, quantityOut] of [
      [odd, "5", "2"],
      [plain, "7", "0"],
    ] as const) {
      const { rows } = await h.store.fungibleBalances(network, {
        wallet,
        contracts: null,
        after: null,
        offset: 0,
        limit: 10,
      });
      expect(rows.map((r) => [r.token, r.quantityIn, r.quantityOut])).toEqual([[token, quantityIn, quantityOut]]);
    }
    const nfts = await h.store.walletNfts(network, { wallet: odd, contracts: null, after: null, offset: 0, limit: 10 });
    expect(nfts.rows.map((r) => [r.token, r.tokenId, r.amount])).toEqual([[token, "3", "1"]]);
  });

  it("refuses bad arguments with an invalid-params error naming each", async () => {
    const wallet = h.set.holders[0];
    const cases: [string, unknown, string][] = [
      ["qn_getWalletTokenBalance", [{ wallet: "0x1234" }], "wallet"],
      ["qn_getWalletTokenBalance", [{ wallet: "vitalik.eth" }], "wallet"],
      ["qn_getWalletTokenBalance", [{ wallet, page: 0 }], "page"],
      ["qn_getWalletTokenBalance", [{ wallet, page: 1.5 }], "page"],
      ["qn_getWalletTokenBalance", [{ wallet, perPage: 101 }], "perPage"],
      ["qn_getWalletTokenBalance", [{ wallet, contracts: [wallet, "nope"] }], "contracts[1]"],
      ["qn_getWalletTokenBalance", [{ wallet, blockNumber: 5 }], "blockNumber"],
      ["qn_getWalletTokenBalance", ["0x"], "params[0]"],
      ["alchemy_getTokenBalances", ["0xzz"], "address"],
      ["alchemy_getTokenBalances", [wallet, "NATIVE_TOKEN"], "tokenSpec"],
      ["alchemy_getTokenBalances", [wallet, "erc20", { maxCount: 0 }], "options.maxCount"],
      ["alchemy_getTokenBalances", [wallet, "erc20", { pageKey: "next" }], "options.pageKey"],
      ["alchemy_getTokenBalances", {}, "params"],
      ["qn_fetchNFTs", [{ wallet, perPage: 41 }], "perPage"],
      ["qn_fetchNFTs", [{ wallet, page: -1 }], "page"],
      ["alchemy_getOwnersForContract", [{ contractAddress: "0xzz" }], "contractAddress"],
      ["alchemy_getOwnersForContract", [{ contractAddress: wallet, withTokenBalances: "yes" }], "withTokenBalances"],
    ];
    for (const [method, params, argument] of cases) {
      const error = await h.call(method, params).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, `${method} ${JSON.stringify(params)}`).toBeInstanceOf(InvalidParams);
      const rpcError = (error as InvalidParams).toJsonRpc();
      expect(rpcError.code).toBe(-32602);
      expect(rpcError.data.argument).toBe(argument);
      expect(rpcError.message).toContain(argument);
    }
  });
});
