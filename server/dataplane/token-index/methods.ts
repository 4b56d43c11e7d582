/**
 * The token add-ons' JSON-RPC methods, answered from the token index, keyed by method name: the proxy
 * answers them itself (its `served` port, ../proxy/served-methods.ts) once its add-on gating let a call
 * through, and hands them the endpoint's network. Request and answer shapes follow the providers'
 * documentation: QuickNode's qn_getWalletTokenBalance, qn_fetchNFTs and qn_fetchNFTsByCollection (v2),
 * Alchemy's alchemy_getTokenBalances and getOwnersForContract. A bad argument is a
 * JSON-RPC invalid-params error (-32602) naming it. What is not served (ENS names, a past blockNumber,
 * NATIVE_TOKEN, NFT media) is refused by name rather than answered wrongly.
 */
import type { TokenIndexStore, WalletPageQuery } from "./store.ts";

export const INVALID_PARAMS = -32602;

/** A JSON-RPC invalid-params error; `argument` names the bad one (`wallet`, `perPage`, `params[1]`…). */
export class InvalidParams extends Error {
  readonly code = INVALID_PARAMS;
  constructor(
    readonly argument: string,
    reason: string,
  ) {
    super(`Invalid params: ${argument} ${reason}`);
    this.name = "InvalidParams";
  }

  /** The `error` member of the JSON-RPC answer. */
  toJsonRpc(): { code: number; message: string; data: { argument: string } } {
    return { code: this.code, message: this.message, data: { argument: this.argument } };
  }
}

export interface TokenMethodContext {
  /** The endpoint's network (a catalogue value such as `ethereum-sepolia`). */
  network: string;
}

export type TokenMethod = (params: unknown, context: TokenMethodContext) => Promise<unknown>;

/** Largest pages, as the providers document them. */
export const WALLET_TOKENS_MAX_PER_PAGE = 100;
export const WALLET_TOKENS_DEFAULT_PER_PAGE = 20;
export const NFTS_MAX_PER_PAGE = 40;
export const NFTS_DEFAULT_PER_PAGE = 20;
/** qn_fetchNFTsByCollection's largest page, as the catalogue documents it. */
export const COLLECTION_MAX_PER_PAGE = 100;
export const MAX_CONTRACTS = 100;
export const NFT_MAX_CONTRACTS = 20;
export const ALCHEMY_MAX_COUNT = 100;
/** Owners per getOwnersForContract page (Alchemy pages at 50,000; a smaller page keeps an answer bounded). */
export const OWNERS_PAGE = 1000;

/** The methods, by name. */
export function tokenMethods(store: TokenIndexStore): ReadonlyMap<string, TokenMethod> {
  return new Map<string, TokenMethod>([
    ["qn_getWalletTokenBalance", (params, ctx) => qnWalletTokenBalance(store, params, ctx)],
    ["alchemy_getTokenBalances", (params, ctx) => alchemyTokenBalances(store, params, ctx)],
    ["qn_fetchNFTs", (params, ctx) => qnFetchNfts(store, params, ctx)],
    ["qn_fetchNFTsByCollection", (params, ctx) => qnFetchNftsByCollection(store, params, ctx)],
    ["alchemy_getOwnersForContract", (params, ctx) => alchemyOwnersForContract(store, params, ctx)],
  ]);
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function address(value: unknown, argument: string): string {
  if (typeof value === "string" && ADDRESS.test(value)) return value.toLowerCase();
  if (typeof value === "string" && value.endsWith(".eth"))
    throw new InvalidParams(argument, "must be a 0x-prefixed 20-byte hex address (ENS names are not resolved here)");
  throw new InvalidParams(argument, "must be a 0x-prefixed 20-byte hex address");
}

function wholeNumber(value: unknown, argument: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    throw new InvalidParams(argument, `must be a whole number from ${min} to ${max}`);
  return value;
}

function addressList(value: unknown, argument: string, max: number): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new InvalidParams(argument, "must be an array of contract addresses");
  if (value.length > max) throw new InvalidParams(argument, `may name at most ${max} contracts`);
  return [...new Set(value.map((v, i) => address(v, `${argument}[${i}]`)))];
}

/** The one object a QuickNode method takes (`params: [{…}]`), its keys checked against `allowed`. */
function singleObject(params: unknown, allowed: readonly string[]): Record<string, unknown> {
  const value = Array.isArray(params) ? params[0] : params;
  if (Array.isArray(params) && params.length > 1) throw new InvalidParams("params", "must hold one object");
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidParams("params[0]", "must be an object");
  for (const key of Object.keys(value))
    if (!allowed.includes(key)) throw new InvalidParams(key, "is not a parameter this service supports");
  return value as Record<string, unknown>;
}

/** `chain` and `network` labels as QuickNode writes them (ETH / MAINNET) from a catalogue network value. */
function networkLabels(network: string): { chain: string; network: string } {
  const [chain, ...rest] = network.split("-");
  return { chain: chain.toUpperCase(), network: rest.length > 0 ? rest.join("-").toUpperCase() : "MAINNET" };
}

function paging(total: number, perPage: number, page: number) {
  return { totalItems: total, totalPages: Math.ceil(total / perPage), pageNumber: page };
}

async function qnWalletTokenBalance(store: TokenIndexStore, params: unknown, ctx: TokenMethodContext) {
  const args = singleObject(params, ["wallet", "contracts", "page", "perPage"]);
  const wallet = address(args.wallet, "wallet");
  const contracts = addressList(args.contracts, "contracts", MAX_CONTRACTS);
  const page = wholeNumber(args.page, "page", 1, Number.MAX_SAFE_INTEGER, 1);
  const perPage = wholeNumber(args.perPage, "perPage", 1, WALLET_TOKENS_MAX_PER_PAGE, WALLET_TOKENS_DEFAULT_PER_PAGE);
  const query: WalletPageQuery = { wallet, contracts, after: null, offset: (page - 1) * perPage, limit: perPage };
  const { rows, total } = await store.fungibleBalances(ctx.network, query);
  return {
    address: wallet,
    ensName: null,
    result: rows.map((r) => ({
      name: r.name,
      symbol: r.symbol,
      decimals: r.decimals === null ? null : String(r.decimals),
      address: r.token,
      quantityIn: r.quantityIn,
      quantityOut: r.quantityOut,
      totalBalance: r.balance,
      quantity_in: r.quantityIn,
      quantity_out: r.quantityOut,
      total_balance: r.balance,
    })),
    ...paging(total, perPage, page),
  };
}

const uint256Hex = (decimal: string) => `0x${BigInt(decimal).toString(16).padStart(64, "0")}`;

async function alchemyTokenBalances(store: TokenIndexStore, params: unknown, ctx: TokenMethodContext) {
  if (!Array.isArray(params) || params.length < 1 || params.length > 3)
    throw new InvalidParams("params", "must be [address, tokenSpec?, options?]");
  const wallet = address(params[0], "address");
  const spec = params[1] ?? "erc20";
  if (Array.isArray(spec)) {
    if (params[2] !== undefined) throw new InvalidParams("options", 'apply only to the tokenSpec "erc20"');
    const contracts = addressList(spec, "tokenSpec", MAX_CONTRACTS) ?? [];
    const { rows } = await store.fungibleBalances(ctx.network, {
      wallet,
      contracts,
      after: null,
      offset: 0,
      limit: MAX_CONTRACTS,
    });
    const byToken = new Map(rows.map((r) => [r.token, r.balance]));
    return {
      address: wallet,
      tokenBalances: contracts.map((c) => ({ contractAddress: c, tokenBalance: uint256Hex(byToken.get(c) ?? "0") })),
    };
  }
  if (spec !== "erc20" && spec !== "DEFAULT_TOKENS")
    throw new InvalidParams(
      "tokenSpec",
      'must be "erc20" or an array of contract addresses (NATIVE_TOKEN is eth_getBalance on this endpoint)',
    );
  const options = params[2] ?? {};
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new InvalidParams("options", "must be an object");
  for (const key of Object.keys(options))
    if (key !== "pageKey" && key !== "maxCount") throw new InvalidParams(`options.${key}`, "is not a known option");
  const { pageKey, maxCount } = options as { pageKey?: unknown; maxCount?: unknown };
  const after = pageKey === undefined || pageKey === null ? null : address(pageKey, "options.pageKey");
  const limit = wholeNumber(maxCount, "options.maxCount", 1, ALCHEMY_MAX_COUNT, ALCHEMY_MAX_COUNT);
  const { rows, total } = await store.fungibleBalances(ctx.network, {
    wallet,
    contracts: null,
    after,
    offset: 0,
    limit,
  });
  return {
    address: wallet,
    tokenBalances: rows.map((r) => ({ contractAddress: r.token, tokenBalance: uint256Hex(r.balance) })),
    ...(total > rows.length && rows.length > 0 ? { pageKey: rows[rows.length - 1].token } : {}),
  };
}

async function qnFetchNfts(store: TokenIndexStore, params: unknown, ctx: TokenMethodContext) {
  const args = singleObject(params, ["wallet", "contracts", "page", "perPage"]);
  const wallet = address(args.wallet, "wallet");
  const contracts = addressList(args.contracts, "contracts", NFT_MAX_CONTRACTS);
  const page = wholeNumber(args.page, "page", 1, Number.MAX_SAFE_INTEGER, 1);
  const perPage = wholeNumber(args.perPage, "perPage", 1, NFTS_MAX_PER_PAGE, NFTS_DEFAULT_PER_PAGE);
  const { rows, total } = await store.walletNfts(ctx.network, {
    wallet,
    contracts,
    after: null,
    offset: (page - 1) * perPage,
    limit: perPage,
  });
  const labels = networkLabels(ctx.network);
  return {
    owner: wallet,
    ensName: null,
    assets: rows.map((r) => ({
      collectionName: r.collectionName,
      collectionTokenId: r.tokenId,
      collectionAddress: r.token,
      name: r.collectionName === null ? `#${r.tokenId}` : `${r.collectionName} #${r.tokenId}`,
      description: "",
      imageUrl: "",
      traits: [],
      chain: labels.chain,
      network: labels.network,
      // Beyond QuickNode's shape: how many of an ERC-1155 id the wallet holds (1 for ERC-721).
      quantity: r.amount,
    })),
    ...paging(total, perPage, page),
  };
}

async function qnFetchNftsByCollection(store: TokenIndexStore, params: unknown, ctx: TokenMethodContext) {
  const args = singleObject(params, ["collection", "page", "perPage"]);
  const collection = address(args.collection, "collection");
  const page = wholeNumber(args.page, "page", 1, Number.MAX_SAFE_INTEGER, 1);
  const perPage = wholeNumber(args.perPage, "perPage", 1, COLLECTION_MAX_PER_PAGE, NFTS_DEFAULT_PER_PAGE);
  const { name, tokenIds, total } = await store.collectionTokens(ctx.network, {
    token: collection,
    offset: (page - 1) * perPage,
    limit: perPage,
  });
  const labels = networkLabels(ctx.network);
  return {
    collection,
    tokens: tokenIds.map((tokenId) => ({
      collectionName: name,
      collectionAddress: collection,
      collectionTokenId: tokenId,
      name: name === null ? `#${tokenId}` : `${name} #${tokenId}`,
      description: "",
      imageUrl: "",
      traits: [],
      chain: labels.chain,
      network: labels.network,
    })),
    ...paging(total, perPage, page),
  };
}

async function alchemyOwnersForContract(store: TokenIndexStore, params: unknown, ctx: TokenMethodContext) {
  const args = singleObject(params, ["contractAddress", "withTokenBalances", "pageKey"]);
  const token = address(args.contractAddress, "contractAddress");
  const withBalances = args.withTokenBalances ?? false;
  if (typeof withBalances !== "boolean") throw new InvalidParams("withTokenBalances", "must be true or false");
  const after = args.pageKey === undefined || args.pageKey === null ? null : address(args.pageKey, "pageKey");
  const owners = await store.collectionOwners(ctx.network, { token, after, limit: OWNERS_PAGE + 1 });
  const page = owners.slice(0, OWNERS_PAGE);
  return {
    owners: withBalances
      ? page.map((o) => ({
          ownerAddress: o.owner,
          tokenBalances: o.holdings.map((h) => ({ tokenId: h.tokenId, balance: h.amount })),
        }))
      : page.map((o) => o.owner),
    ...(owners.length > OWNERS_PAGE ? { pageKey: page[page.length - 1].owner } : {}),
  };
}
