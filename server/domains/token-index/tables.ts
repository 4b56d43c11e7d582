import { bigint, index, integer, numeric, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

/**
 * The token index (server/dataplane/token-index/): chain data read from transfer logs, the same for every
 * account, so these tables carry no account id. Addresses are lower-case hex; amounts and ids are
 * uint256, kept exactly as numeric(78, 0). The logs themselves are not kept: their effects are. Why it is shaped so: docs/decisions/1550-token-index.md.
 */
const uint256 = (name: string) => numeric(name, { precision: 78, scale: 0 });

/** Per network: the last block indexed (the cursor a restart resumes from). */
export const tokenIndexCursors = pgTable("token_index_cursors", {
  network: text("network").primaryKey(),
  blockNumber: bigint("block_number", { mode: "number" }).notNull(),
  blockHash: text("block_hash").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/**
 * The ranges written within the reorg window, one row each: its end with its hash (a checkpoint, where a
 * reorg's fork point is looked for) and what its transfers changed, summed per holder, as column arrays
 * (the ones the range's write unnests into the holdings): what a rollback to an earlier checkpoint
 * subtracts. One row per range, not one per holder: a range of thousands of holders is one tuple.
 */
export const tokenIndexRanges = pgTable(
  "token_index_ranges",
  {
    network: text("network").notNull(),
    /** The range's last block. */
    blockNumber: bigint("block_number", { mode: "number" }).notNull(),
    blockHash: text("block_hash").notNull(),
    /** ERC-20: holder, token, quantity received and sent, at the same index of each array. */
    owners: text("owners").array().notNull(),
    tokens: text("tokens").array().notNull(),
    quantitiesIn: uint256("quantities_in").array().notNull(),
    quantitiesOut: uint256("quantities_out").array().notNull(),
    /** NFTs: token, id, holder and the signed change of the amount held (numeric(78, 0) holds ±(2^256 − 1)). */
    nftTokens: text("nft_tokens").array().notNull(),
    nftTokenIds: uint256("nft_token_ids").array().notNull(),
    nftOwners: text("nft_owners").array().notNull(),
    nftAmounts: uint256("nft_amounts").array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.network, t.blockNumber] })],
);

/** Token contracts seen in transfer logs, with the metadata read from them (null where a read failed). */
export const tokenContracts = pgTable(
  "token_contracts",
  {
    network: text("network").notNull(),
    address: text("address").notNull(),
    standard: text("standard").notNull(),
    name: text("name"),
    symbol: text("symbol"),
    decimals: integer("decimals"),
    /** The block of its first indexed transfer: a rollback past it forgets the contract. */
    firstBlock: bigint("first_block", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.network, t.address] })],
);

/** ERC-20 totals per holder and token: what it received and sent (its balance is the difference). */
export const tokenBalances = pgTable(
  "token_balances",
  {
    network: text("network").notNull(),
    owner: text("owner").notNull(),
    token: text("token").notNull(),
    quantityIn: uint256("quantity_in").notNull(),
    quantityOut: uint256("quantity_out").notNull(),
  },
  (t) => [primaryKey({ columns: [t.network, t.owner, t.token] })],
);

/** NFTs held now (ERC-721: amount 1; ERC-1155: the amount), one row per holder and id. */
export const nftHoldings = pgTable(
  "nft_holdings",
  {
    network: text("network").notNull(),
    token: text("token").notNull(),
    tokenId: uint256("token_id").notNull(),
    owner: text("owner").notNull(),
    amount: uint256("amount").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.token, t.tokenId, t.owner] }),
    index("nft_holdings_owner").on(t.network, t.owner, t.token, t.tokenId),
    index("nft_holdings_token_owner").on(t.network, t.token, t.owner),
  ],
);
