import type pg from "pg";
import type { TransferEffects } from "../../dataplane/token-index/logs.ts";
import type {
  FungibleBalance,
  IndexCursor,
  NftHolding,
  TokenIndexStore,
  WalletPageQuery,
} from "../../dataplane/token-index/store.ts";

/**
 * The token index's store on PostgreSQL (tables.ts). A range is written by one statement that moves the
 * network's cursor from the range's parent, and writes only if it did; a rollback runs in a transaction
 * holding the network's advisory lock and the cursor row. So two indexers on one database (two service
 * processes) never interleave a network's writes: the second finds the cursor moved and gives up its
 * range. Plain SQL with array parameters (unnest): a range of thousands of transfers is one round trip.
 */
export function databaseTokenIndexStore(pool: pg.Pool): TokenIndexStore {
  return {
    async cursor(network) {
      const { rows } = await pool.query<{ block_number: string; block_hash: string }>(
        "select block_number, block_hash from token_index_cursors where network = $1",
        [network],
      );
      return rows[0] ? { block: Number(rows[0].block_number), hash: rows[0].block_hash } : null;
    },

    async knownTokens(network) {
      const { rows } = await pool.query<{ address: string }>("select address from token_contracts where network = $1", [
        network,
      ]);
      return rows.map((r) => r.address);
    },

    async commitRange(range) {
      const { network, effects, end, keepFrom, parent } = range;
      const arrays = effectArrays(effects);
      const tokens = range.newTokens;
      const { rows } = await pool.query<{ written: boolean }>({
        // Named: parsed once per connection, not at every range.
        name: "token-index-commit-range",
        text: COMMIT_RANGE_SQL,
        values: [
          network,
          end.block,
          end.hash,
          end.block >= keepFrom,
          textArray(arrays.owners),
          textArray(arrays.tokens),
          numberArray(arrays.ins),
          numberArray(arrays.outs),
          textArray(arrays.nftTokens),
          numberArray(arrays.nftIds),
          textArray(arrays.nftOwners),
          numberArray(arrays.nftAmounts),
          keepFrom,
          parent?.block ?? null,
          parent?.hash ?? null,
          tokens.map((t) => t.address),
          tokens.map((t) => t.standard),
          tokens.map((t) => t.name),
          tokens.map((t) => t.symbol),
          tokens.map((t) => t.decimals),
          tokens.map((t) => t.firstBlock),
        ],
      });
      const written = rows[0]?.written === true;
      // Holdings a range brought to nothing, removed once it is in (a statement cannot see its own writes).
      if (written && arrays.nftTokens.length > 0) await removeEmptyHoldings(pool, network, arrays);
      return written;
    },

    async checkpoints(network, below, limit) {
      const { rows } = await pool.query<{ block_number: string; block_hash: string }>(
        `select block_number, block_hash from token_index_ranges
         where network = $1 and block_number < $2 order by block_number desc limit $3`,
        [network, below, limit],
      );
      return rows.map((r) => ({ block: Number(r.block_number), hash: r.block_hash }));
    },

    rollBack: (network, ancestor, expected) =>
      inNetworkTransaction(pool, network, expected, async (client) => {
        if (!ancestor) {
          for (const table of NETWORK_TABLES) await client.query(`delete from ${table} where network = $1`, [network]);
          return;
        }
        const after = ancestor.block;
        const fungible = await client.query<{
          owner: string;
          token: string;
          quantity_in: string;
          quantity_out: string;
        }>(
          `select owner, token, -sum(quantity_in) as quantity_in, -sum(quantity_out) as quantity_out
           from token_index_ranges r, unnest(r.owners, r.tokens, r.quantities_in, r.quantities_out)
             as c(owner, token, quantity_in, quantity_out)
           where r.network = $1 and r.block_number > $2 group by owner, token`,
          [network, after],
        );
        const nft = await client.query<{ token: string; token_id: string; owner: string; amount: string }>(
          `select token, token_id, owner, -sum(amount) as amount
           from token_index_ranges r, unnest(r.nft_tokens, r.nft_token_ids, r.nft_owners, r.nft_amounts)
             as c(token, token_id, owner, amount)
           where r.network = $1 and r.block_number > $2 group by token, token_id, owner`,
          [network, after],
        );
        await applyEffects(
          client,
          network,
          {
            owners: fungible.rows.map((r) => r.owner),
            tokens: fungible.rows.map((r) => r.token),
            ins: fungible.rows.map((r) => r.quantity_in),
            outs: fungible.rows.map((r) => r.quantity_out),
            nftTokens: nft.rows.map((r) => r.token),
            nftIds: nft.rows.map((r) => r.token_id),
            nftOwners: nft.rows.map((r) => r.owner),
            nftAmounts: nft.rows.map((r) => r.amount),
          },
          { removeEmptyBalances: true },
        );
        await client.query("delete from token_index_ranges where network = $1 and block_number > $2", [network, after]);
        await client.query("delete from token_contracts where network = $1 and first_block > $2", [network, after]);
        await client.query(
          "update token_index_cursors set block_number = $2, block_hash = $3, updated_at = now() where network = $1",
          [network, ancestor.block, ancestor.hash],
        );
      }),

    async fungibleBalances(network, query) {
      const { rows } = await pool.query<FungibleRow>(FUNGIBLE_BALANCES_SQL, walletParams(network, query));
      const total =
        rows.length > 0 ? Number(rows[0].total) : query.offset > 0 ? await countFungible(pool, network, query) : 0;
      return {
        total,
        rows: rows.map(
          (r): FungibleBalance => ({
            token: r.token,
            name: r.name,
            symbol: r.symbol,
            decimals: r.decimals,
            quantityIn: r.quantity_in,
            quantityOut: r.quantity_out,
            balance: r.balance,
          }),
        ),
      };
    },

    async walletNfts(network, query) {
      const { rows } = await pool.query<NftRow>(WALLET_NFTS_SQL, walletParams(network, query));
      const total =
        rows.length > 0 ? Number(rows[0].total) : query.offset > 0 ? await countNfts(pool, network, query) : 0;
      return {
        total,
        rows: rows.map(
          (r): NftHolding => ({
            token: r.token,
            standard: r.standard === "ERC1155" ? "ERC1155" : "ERC721",
            collectionName: r.name,
            tokenId: r.token_id,
            amount: r.amount,
          }),
        ),
      };
    },

    async collectionOwners(network, query) {
      const { rows } = await pool.query<{ owner: string; token_ids: string[]; amounts: string[] }>(
        `select owner, array_agg(token_id::text order by token_id) as token_ids,
           array_agg(amount::text order by token_id) as amounts
         from nft_holdings
         where network = $1 and token = $2 and amount > 0 and ($3::text is null or owner > $3)
         group by owner order by owner limit $4`,
        [network, query.token, query.after, query.limit],
      );
      return rows.map((r) => ({
        owner: r.owner,
        holdings: r.token_ids.map((tokenId, i) => ({ tokenId, amount: r.amounts[i] })),
      }));
    },

    async collectionTokens(network, query) {
      const [ids, contract] = await Promise.all([
        pool.query<{ token_id: string; total: string }>(
          `select token_id::text as token_id, count(*) over () as total
           from nft_holdings where network = $1 and token = $2 and amount > 0
           group by token_id order by token_id limit $3 offset $4`,
          [network, query.token, query.limit, query.offset],
        ),
        pool.query<{ name: string | null }>("select name from token_contracts where network = $1 and address = $2", [
          network,
          query.token,
        ]),
      ]);
      const total =
        ids.rows.length > 0
          ? Number(ids.rows[0].total)
          : query.offset > 0
            ? Number(
                (
                  await pool.query<{ n: string }>(
                    "select count(distinct token_id) as n from nft_holdings where network = $1 and token = $2 and amount > 0",
                    [network, query.token],
                  )
                ).rows[0].n,
              )
            : 0;
      return { name: contract.rows[0]?.name ?? null, tokenIds: ids.rows.map((r) => r.token_id), total };
    },
  };
}

/**
 * A range's write, one statement, so one round trip and its own transaction: everything it writes hangs on
 * the cursor moving from the range's parent ($14, $15; a data-modifying CTE's RETURNING orders what reads
 * it). A concurrent writer's update of the same cursor row waits for this one's commit and then finds the
 * row moved (READ COMMITTED re-checks an updated row), so it writes nothing; a rollback holds that row
 * locked (rollBack) for as long as it works.
 *
 * Its commit does not wait for the WAL to reach the disk (synchronous_commit off for this transaction only,
 * set by the statement itself: no extra round trip): the index is derived from the chain and its cursor
 * moves in the same transaction, so a database crash loses at most the last ranges whole, and the indexer
 * reads them again from the cursor that survived (docs/decisions/1831-token-index-commits-unflushed.md).
 */
const COMMIT_RANGE_SQL = `with moved as (
           update token_index_cursors set block_number = $2::bigint, block_hash = $3::text, updated_at = now()
           where network = $1::text and block_number = $14::bigint and block_hash = $15::text returning 1 as ok),
         created as (
           insert into token_index_cursors (network, block_number, block_hash)
           select $1::text, $2::bigint, $3::text where $14::bigint is null
           on conflict (network) do nothing returning 1 as ok),
         go as (select ok from moved union all select ok from created),
         contracts as (
           insert into token_contracts (network, address, standard, name, symbol, decimals, first_block)
           select $1::text, * from unnest($16::text[], $17::text[], $18::text[], $19::text[], $20::int[], $21::bigint[])
           where exists (select from go)
           on conflict do nothing),
         balances as (
           insert into token_balances (network, owner, token, quantity_in, quantity_out)
           select $1::text, * from unnest($5::text[], $6::text[], $7::numeric[], $8::numeric[])
           where exists (select from go)
           on conflict (network, owner, token) do update set
             quantity_in = token_balances.quantity_in + excluded.quantity_in,
             quantity_out = token_balances.quantity_out + excluded.quantity_out),
         holdings as (
           insert into nft_holdings (network, token, token_id, owner, amount)
           select $1::text, * from unnest($9::text[], $10::numeric[], $11::text[], $12::numeric[])
           where exists (select from go)
           on conflict (network, token, token_id, owner) do update set amount = nft_holdings.amount + excluded.amount),
         kept as (
           insert into token_index_ranges (network, block_number, block_hash, owners, tokens, quantities_in,
             quantities_out, nft_tokens, nft_token_ids, nft_owners, nft_amounts)
           select $1::text, $2::bigint, $3::text, $5::text[], $6::text[], $7::numeric[], $8::numeric[],
             $9::text[], $10::numeric[], $11::text[], $12::numeric[]
           where $4::boolean and exists (select from go)),
         pruned as (
           delete from token_index_ranges where network = $1::text and block_number < $13::bigint
             and exists (select from go))
         select exists (select from go) as written,
           set_config('synchronous_commit', 'off', true) as commit_unflushed`;

/**
 * The query behind a wallet's token balances (one statement: rows of the page and the filter's total).
 * Exported so the addons bench runs the very same SQL beside the method that uses it.
 */
export const FUNGIBLE_BALANCES_SQL = `
  select b.token, c.name, c.symbol, c.decimals, b.quantity_in, b.quantity_out,
    (b.quantity_in - b.quantity_out) as balance, count(*) over () as total
  from token_balances b
  left join token_contracts c on c.network = b.network and c.address = b.token
  where b.network = $1 and b.owner = $2 and ($3::text[] is null or b.token = any($3)) and ($4::text is null or b.token > $4)
  order by b.token limit $5 offset $6`;

const WALLET_NFTS_SQL = `
  select h.token, c.standard, c.name, h.token_id, h.amount, count(*) over () as total
  from nft_holdings h
  left join token_contracts c on c.network = h.network and c.address = h.token
  where h.network = $1 and h.owner = $2 and h.amount > 0 and ($3::text[] is null or h.token = any($3))
    and ($4::text is null or h.token > $4)
  order by h.token, h.token_id limit $5 offset $6`;

/** Every table of the index, each keyed by network first. */
const NETWORK_TABLES = [
  "token_index_ranges",
  "token_balances",
  "nft_holdings",
  "token_contracts",
  "token_index_cursors",
] as const;

interface FungibleRow {
  token: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  quantity_in: string;
  quantity_out: string;
  balance: string;
  total: string;
}

interface NftRow {
  token: string;
  standard: string | null;
  name: string | null;
  token_id: string;
  amount: string;
  total: string;
}

export function walletParams(network: string, q: WalletPageQuery): unknown[] {
  return [network, q.wallet, q.contracts, q.after, q.limit, q.offset];
}

async function countFungible(pool: pg.Pool, network: string, q: WalletPageQuery): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `select count(*) as n from token_balances
     where network = $1 and owner = $2 and ($3::text[] is null or token = any($3)) and ($4::text is null or token > $4)`,
    [network, q.wallet, q.contracts, q.after],
  );
  return Number(rows[0].n);
}

async function countNfts(pool: pg.Pool, network: string, q: WalletPageQuery): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `select count(*) as n from nft_holdings
     where network = $1 and owner = $2 and amount > 0 and ($3::text[] is null or token = any($3))
       and ($4::text is null or token > $4)`,
    [network, q.wallet, q.contracts, q.after],
  );
  return Number(rows[0].n);
}

/**
 * Runs `write` in a transaction holding the network's advisory lock, only while its cursor is `expected`
 * (null: no cursor yet). Answers whether it ran.
 */
async function inNetworkTransaction(
  pool: pg.Pool,
  network: string,
  expected: IndexCursor | null,
  write: (client: pg.PoolClient) => Promise<void>,
): Promise<boolean> {
  const client = await pool.connect();
  try {
    // One round trip for both (a simple query cannot carry parameters: the network is quoted here).
    await client.query(
      `begin; select pg_advisory_xact_lock(hashtext(${client.escapeLiteral(`token-index:${network}`)}))`,
    );
    // The cursor row locked until commit: a range's commit (one statement moving this row) waits for it.
    const { rows } = await client.query<{ block_number: string; block_hash: string }>(
      "select block_number, block_hash from token_index_cursors where network = $1 for update",
      [network],
    );
    const current = rows[0];
    const same = expected
      ? current !== undefined && Number(current.block_number) === expected.block && current.block_hash === expected.hash
      : current === undefined;
    if (!same) {
      await client.query("rollback");
      return false;
    }
    await write(client);
    await client.query("commit");
    return true;
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * A text[] parameter as PostgreSQL's array literal, made in one join: pg escapes each element of an array
 * parameter with two regular expressions, 2.2 ms of client CPU for the 4,260 rows of the addons bench's
 * index against 0.6 ms so. An element with a quote or a backslash (a node may answer anything) leaves the
 * array to pg's own escaping.
 */
function textArray(values: string[]): string | string[] {
  for (const v of values) if (v.includes('"') || v.includes("\\")) return values;
  return values.length === 0 ? "{}" : `{"${values.join('","')}"}`;
}

/** A numeric[] parameter as PostgreSQL's array literal: decimal strings from BigInts need no escaping. */
const numberArray = (values: string[]): string => `{${values.join(",")}}`;

/** Effects as the column arrays of the statements that write them. */
interface EffectArrays {
  owners: string[];
  tokens: string[];
  ins: string[];
  outs: string[];
  nftTokens: string[];
  nftIds: string[];
  nftOwners: string[];
  nftAmounts: string[];
}

function effectArrays(effects: TransferEffects): EffectArrays {
  const arrays: EffectArrays = {
    owners: [],
    tokens: [],
    ins: [],
    outs: [],
    nftTokens: [],
    nftIds: [],
    nftOwners: [],
    nftAmounts: [],
  };
  for (const [token, holders] of effects.fungible) {
    for (const [owner, [qIn, qOut]] of holders) {
      arrays.owners.push(owner);
      arrays.tokens.push(token);
      arrays.ins.push(qIn.toString());
      arrays.outs.push(qOut.toString());
    }
  }
  for (const [key, amount] of effects.nft) {
    const [token, tokenId, owner] = key.split("|");
    arrays.nftTokens.push(token);
    arrays.nftIds.push(tokenId);
    arrays.nftOwners.push(owner);
    arrays.nftAmounts.push(amount.toString());
  }
  return arrays;
}

/** Adds summed effects to the holdings; rows a rollback brings to nothing are removed. */
async function applyEffects(
  client: pg.PoolClient,
  network: string,
  a: EffectArrays,
  options: { removeEmptyBalances: boolean },
): Promise<void> {
  if (a.owners.length > 0) {
    await client.query(
      `insert into token_balances (network, owner, token, quantity_in, quantity_out)
       select $1, * from unnest($2::text[], $3::text[], $4::numeric[], $5::numeric[])
       on conflict (network, owner, token) do update set
         quantity_in = token_balances.quantity_in + excluded.quantity_in,
         quantity_out = token_balances.quantity_out + excluded.quantity_out`,
      [network, a.owners, a.tokens, a.ins, a.outs],
    );
    if (options.removeEmptyBalances)
      await client.query(
        `delete from token_balances b using unnest($2::text[], $3::text[]) k(owner, token)
       where b.network = $1 and b.owner = k.owner and b.token = k.token and b.quantity_in = 0 and b.quantity_out = 0`,
        [network, a.owners, a.tokens],
      );
  }
  if (a.nftTokens.length > 0) {
    await client.query(
      `insert into nft_holdings (network, token, token_id, owner, amount)
       select $1, * from unnest($2::text[], $3::numeric[], $4::text[], $5::numeric[])
       on conflict (network, token, token_id, owner) do update set amount = nft_holdings.amount + excluded.amount`,
      [network, a.nftTokens, a.nftIds, a.nftOwners, a.nftAmounts],
    );
    await removeEmptyHoldings(client, network, a);
  }
}

/** Removes the holdings of `a` whose amount came to nothing. */
async function removeEmptyHoldings(db: pg.Pool | pg.PoolClient, network: string, a: EffectArrays): Promise<void> {
  await db.query(
    `delete from nft_holdings h using unnest($2::text[], $3::numeric[], $4::text[]) k(token, token_id, owner)
     where h.network = $1 and h.token = k.token and h.token_id = k.token_id and h.owner = k.owner and h.amount = 0`,
    [network, a.nftTokens, a.nftIds, a.nftOwners],
  );
}
