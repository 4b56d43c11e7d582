/**
 * Token transfer logs decoded into what they change, a pure step: ERC-20 and ERC-721 `Transfer` (told
 * apart by their topic count: the 721 token id is indexed, the 20 value is data), ERC-1155
 * `TransferSingle` and `TransferBatch` (one transfer per id). A log that does not have its event's shape
 * (another contract's event with the same signature but other indexing, short data) is skipped, not
 * guessed at. Topics and data are read by hand (fixed offsets of 32-byte words): no ABI decoder per log.
 */

/** keccak256 of each event signature: the first topic of its logs. */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
export const TRANSFER_SINGLE_TOPIC = "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62";
export const TRANSFER_BATCH_TOPIC = "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb";
/** The `topics` filter of eth_getLogs that selects every transfer event the index reads. */
export const TRANSFER_TOPICS_FILTER = [[TRANSFER_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC]] as const;

export type TokenStandard = "ERC20" | "ERC721" | "ERC1155";

/** A log as eth_getLogs answers it (the fields the index reads). */
export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  removed?: boolean;
}

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

const WORD = 64;

function topicAddress(topic: string): string {
  return `0x${topic.slice(26).toLowerCase()}`;
}

function word(data: string, index: number): string {
  return data.slice(2 + index * WORD, 2 + (index + 1) * WORD);
}

function wordNumber(data: string, index: number): bigint {
  return BigInt(`0x${word(data, index) || "0"}`);
}

/** The uint256[] at a head offset of ABI-encoded data, or null when it runs past the data. */
function uintArray(data: string, headIndex: number): bigint[] | null {
  const words = (data.length - 2) / WORD;
  const start = Number(wordNumber(data, headIndex) / 32n);
  if (start >= words) return null;
  const length = Number(wordNumber(data, start));
  if (start + 1 + length > words) return null;
  return Array.from({ length }, (_, i) => wordNumber(data, start + 1 + i));
}

/** What a set of transfers changes: ERC-20 quantities in and out per holder, NFT amounts per holder and id. */
export interface TransferEffects {
  /** token → holder → [quantity in, quantity out] (maps in maps: no key strings built per transfer). */
  fungible: Map<string, Map<string, [bigint, bigint]>>;
  /** key `${token}|${tokenId}|${owner}` → signed change of the amount held. */
  nft: Map<string, bigint>;
}

/** What transfer logs change, summed as they are decoded: a range of thousands of logs leaves only its holders' sums. */
export interface LogEffects extends TransferEffects {
  /** Transfers decoded (a TransferBatch log holds one per id). */
  transfers: number;
  /** Each token contract seen, with its standard and the block of its first transfer. */
  tokens: Map<string, { standard: TokenStandard; firstBlock: number }>;
}

export function noEffects(): LogEffects {
  return { fungible: new Map(), nft: new Map(), transfers: 0, tokens: new Map() };
}

function quantities(effects: LogEffects, token: string, holder: string): [bigint, bigint] {
  let holders = effects.fungible.get(token);
  if (!holders) {
    holders = new Map();
    effects.fungible.set(token, holders);
  }
  let q = holders.get(holder);
  if (!q) {
    q = [0n, 0n];
    holders.set(holder, q);
  }
  return q;
}

function addNft(effects: LogEffects, token: string, tokenId: bigint, holder: string, change: bigint): void {
  const key = `${token}|${tokenId}|${holder}`;
  effects.nft.set(key, (effects.nft.get(key) ?? 0n) + change);
}

/** One NFT transfer's effect (the zero address, which mints and burns, holds nothing). */
function nftTransfer(
  effects: LogEffects,
  token: string,
  from: string,
  to: string,
  tokenId: bigint,
  amount: bigint,
): void {
  if (to !== ZERO_ADDRESS) addNft(effects, token, tokenId, to, amount);
  if (from !== ZERO_ADDRESS) addNft(effects, token, tokenId, from, -amount);
}

/** Adds `amount` to slot `side` (0 in, 1 out) of `holder`'s quantities in `holders`. */
function addQuantity(holders: Map<string, [bigint, bigint]>, holder: string, side: 0 | 1, amount: bigint): void {
  const q = holders.get(holder);
  if (q) q[side] += amount;
  else holders.set(holder, side === 0 ? [amount, 0n] : [0n, amount]);
}

/**
 * Decodes `logs` (in chain order) and adds their effects to `effects`. Decoded straight into the sums,
 * with no object per transfer: the logs of a range die young instead of being kept (and copied by the
 * garbage collector) until the range is written. ERC-20 holders are summed by their topic as the node
 * sent it (no address string made per log) and turned into addresses once per holder at the end.
 */
export function addLogEffects(effects: LogEffects, logs: readonly RawLog[]): void {
  /** token → holder's topic → [quantity in, quantity out]. */
  const byTopic = new Map<string, Map<string, [bigint, bigint]>>();
  let address = "";
  let token = "";
  for (const log of logs) {
    if (log.removed) continue;
    const topics = log.topics;
    const data = log.data;
    let standard: TokenStandard;
    let decoded = 1;
    // Logs come in runs of one contract: its address lowered once a run.
    if (log.address !== address) {
      address = log.address;
      token = address.toLowerCase();
    }
    if (topics[0] === TRANSFER_TOPIC) {
      if (topics.length === 3 && data.length === 2 + WORD) {
        standard = "ERC20";
        const amount = BigInt(data);
        let holders = byTopic.get(token);
        if (!holders) {
          holders = new Map();
          byTopic.set(token, holders);
        }
        addQuantity(holders, topics[2], 0, amount);
        addQuantity(holders, topics[1], 1, amount);
      } else if (topics.length === 4 && data.length === 2) {
        standard = "ERC721";
        nftTransfer(effects, token, topicAddress(topics[1]), topicAddress(topics[2]), BigInt(topics[3]), 1n);
      } else continue;
    } else if (topics[0] === TRANSFER_SINGLE_TOPIC) {
      if (topics.length !== 4 || data.length !== 2 + 2 * WORD) continue;
      standard = "ERC1155";
      nftTransfer(
        effects,
        token,
        topicAddress(topics[2]),
        topicAddress(topics[3]),
        wordNumber(data, 0),
        wordNumber(data, 1),
      );
    } else if (topics[0] === TRANSFER_BATCH_TOPIC && topics.length === 4 && data.length >= 2 + 4 * WORD) {
      const ids = uintArray(data, 0);
      const values = uintArray(data, 1);
      if (!ids || !values || ids.length !== values.length) continue;
      standard = "ERC1155";
      decoded = ids.length;
      const from = topicAddress(topics[2]);
      const to = topicAddress(topics[3]);
      for (const [i, id] of ids.entries()) nftTransfer(effects, token, from, to, id, values[i]);
    } else continue;
    effects.transfers += decoded;
    if (!effects.tokens.has(token))
      effects.tokens.set(token, { standard, firstBlock: Number.parseInt(log.blockNumber, 16) });
  }
  // The zero address (which mints and burns) holds nothing.
  for (const [token, holders] of byTopic)
    for (const [topic, [qIn, qOut]] of holders) {
      const holder = topicAddress(topic);
      if (holder === ZERO_ADDRESS) continue;
      const q = quantities(effects, token, holder);
      q[0] += qIn;
      q[1] += qOut;
    }
}

/** Adds the effects of a later range to `into` (ranges written as one). */
export function addEffects(into: LogEffects, later: LogEffects): void {
  for (const [token, holders] of later.fungible)
    for (const [holder, [qIn, qOut]] of holders) {
      const q = quantities(into, token, holder);
      q[0] += qIn;
      q[1] += qOut;
    }
  for (const [key, change] of later.nft) into.nft.set(key, (into.nft.get(key) ?? 0n) + change);
  into.transfers += later.transfers;
  for (const [token, seen] of later.tokens) if (!into.tokens.has(token)) into.tokens.set(token, seen);
}
