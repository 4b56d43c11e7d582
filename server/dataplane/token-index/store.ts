import type { TokenStandard, TransferEffects } from "./logs.ts";

/**
 * The token index's store: the port through which the indexer keeps its progress and effects, and the
 * add-on methods read them (the token-index domain fills it: server/domains/token-index/index-store.ts).
 * The rows are chain data, the same for every account: no function takes an account, and the methods
 * answer only what the chain says to anyone who may call them (the proxy's add-on gating decides who).
 */
export interface TokenIndexStore {
  /** The last block indexed on `network`, or null before the first. */
  cursor(network: string): Promise<IndexCursor | null>;
  /** Addresses of the token contracts whose metadata is stored. */
  knownTokens(network: string): Promise<string[]>;
  /**
   * Writes a range's effects (and, within the reorg window, keeps them to undo), its new tokens' metadata
   * and its last block as the new cursor, in one transaction, only while the cursor is still `range.parent` (false when another indexer
   * moved it, and nothing is written).
   */
  commitRange(range: IndexedRange): Promise<boolean>;
  /** Stored range ends below `below`, newest first: where a fork point is looked for. */
  checkpoints(network: string, below: number, limit: number): Promise<IndexCursor[]>;
  /**
   * Undoes every effect of blocks after `ancestor` (from the kept changes) and makes it the cursor; with
   * no ancestor, forgets the network's index whole (it is read again from the start). In one transaction,
   * only while the cursor is still `expected` (false, and nothing is changed, otherwise).
   */
  rollBack(network: string, ancestor: IndexCursor | null, expected: IndexCursor): Promise<boolean>;

  /** A wallet's ERC-20 tokens (ever received or sent), by token address, with the total of the filter. */
  fungibleBalances(network: string, query: WalletPageQuery): Promise<{ rows: FungibleBalance[]; total: number }>;
  /** A wallet's NFTs (ERC-721 and ERC-1155 ids it holds now), by token and id, with the total. */
  walletNfts(network: string, query: WalletPageQuery): Promise<{ rows: NftHolding[]; total: number }>;
  /** Holders of a collection, by holder address after `after`, at most `limit` of them, with their ids. */
  collectionOwners(
    network: string,
    query: { token: string; after: string | null; limit: number },
  ): Promise<{ owner: string; holdings: { tokenId: string; amount: string }[] }[]>;
  /** The ids of a collection someone holds now, in order, a page of them, with the collection's name and the total. */
  collectionTokens(
    network: string,
    query: { token: string; offset: number; limit: number },
  ): Promise<{ name: string | null; tokenIds: string[]; total: number }>;
}

export interface IndexCursor {
  block: number;
  hash: string;
}

export interface TokenMetadata {
  address: string;
  standard: TokenStandard;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
}

export interface IndexedRange {
  network: string;
  /** The cursor this range continues (null: the index is empty and the range starts it). */
  parent: IndexCursor | null;
  /** Its last block, the new cursor. */
  end: IndexCursor;
  /**
   * The oldest block a reorg may still replace (the head less the reorg window): the changes of ranges
   * ending from it on, and their checkpoints, are kept for a rollback; older ones are not (and are dropped).
   */
  keepFrom: number;
  /** What the range's transfers change, summed (logs.ts transferEffects). */
  effects: TransferEffects;
  /** Token contracts first seen in the range, with the block of their first transfer. */
  newTokens: (TokenMetadata & { firstBlock: number })[];
}

export interface WalletPageQuery {
  wallet: string;
  /** Only these token contracts (lower case), or every one. */
  contracts: string[] | null;
  /** Rows after this token address (a page key), or from the first. */
  after: string | null;
  offset: number;
  limit: number;
}

export interface FungibleBalance {
  token: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  /** Decimal strings. */
  quantityIn: string;
  quantityOut: string;
  balance: string;
}

export interface NftHolding {
  token: string;
  standard: TokenStandard;
  collectionName: string | null;
  tokenId: string;
  amount: string;
}
