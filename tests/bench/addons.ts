/**
 * The token add-ons' data side (`npm run bench -- addons`), each against the baseline it is run beside:
 *
 * 1. Token balances of a wallet with 1,000 transfers over 20 ERC-20 tokens (25 in and 25 out of each,
 *    made on anvil with the test contracts' transferMany, indexed): the qn_getWalletTokenBalance handler
 *    called in this process (validation, the store's query, the answer's shape) against the same SQL
 *    (FUNGIBLE_BALANCES_SQL) run directly on the same pool. p50 at 1 connection; calls per second at 1 and
 *    10 in flight (pool of 10). The two sides alternate in slices, so both see the same load.
 * 2. Indexing transfer logs: the TokenIndexer from an empty index to the tip (reading, decoding, metadata,
 *    writing balances and holdings) against reading the same logs raw with eth_getLogs in the same ranges,
 *    in logs per second; rounds alternate which side goes first, and each side reads once unmeasured
 *    before them. Beside the rates, each side's CPU time (this process, anvil, PostgreSQL's processes),
 *    which the shared machine's load moves far less than wall time. Neither side's run starts from a
 *    forced collection (docs/decisions/1930-addons-bench-sides-not-collected-before-their-runs.md).
 *
 * The machine is shared: the load average is printed beside the figures, and the ratios are what to compare.
 */
import { loadavg } from "node:os";
import { type Address, encodeDeployData, getAddress } from "viem";
import { startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { compileTestTokens } from "../../server/dataplane/token-index/compile.ts";
import { TokenIndexer } from "../../server/dataplane/token-index/indexer.ts";
import { TRANSFER_TOPICS_FILTER } from "../../server/dataplane/token-index/logs.ts";
import { tokenMethods } from "../../server/dataplane/token-index/methods.ts";
import { contractCall, sendTransactions, type Transaction } from "../../server/dataplane/token-index/test-tokens.ts";
import {
  databaseTokenIndexStore,
  FUNGIBLE_BALANCES_SQL,
  walletParams,
} from "../../server/domains/token-index/index-store.ts";
import { openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { SOLC_CACHE } from "../api/token-index-harness.ts";
import { processCpuMs, siblingPids } from "./cpu.ts";
import { startPostgres } from "./postgres.ts";

const NETWORK = "ethereum-mainnet";
const TOKENS = 20;
/** Transfers of the wallet per token, each way: 20 tokens × 25 × 2 = 1,000. */
const PER_TOKEN_EACH_WAY = 25;
/** Extra transfer logs for the indexing rate: batches of this many transfers per transaction. */
const BULK_TRANSACTIONS = Number(process.env.BENCH_ADDONS_BULK_TXS ?? 40);
const BULK_PER_TRANSACTION = 500;
/** Most blocks per eth_getLogs for the indexer (a bulk block holds 500 logs); the raw side reads the ranges it read. */
const RANGE_BLOCKS = Number(process.env.BENCH_ADDONS_RANGE_BLOCKS ?? 10);
const ROUNDS = Number(process.env.BENCH_ADDONS_ROUNDS ?? 3);
const QUERY_MS = Number(process.env.BENCH_ADDONS_QUERY_MS ?? 2000);
const SLICE = 200;
const C10_WINDOW_MS = 250;
const C10_PAIRS = 7;

export interface AddonsBenchResult {
  load: string;
  handlerP50Ms: number;
  sqlP50Ms: number;
  c1: { handlerRps: number; sqlRps: number };
  c10: { handlerRps: number; sqlRps: number };
  indexing: {
    logs: number;
    indexedLogsPerSec: number;
    rawLogsPerSec: number;
    ratio: number;
    /** CPU milliseconds each side took: this process, anvil, PostgreSQL. */
    indexedCpu: Cpu;
    rawCpu: Cpu;
  }[];
}

interface Cpu {
  node: number;
  anvil: number;
  postgres: number;
}

const cpuText = (c: Cpu) =>
  `node ${Math.round(c.node)}, anvil ${Math.round(c.anvil)}, PostgreSQL ${Math.round(c.postgres)} ms`;

const loadText = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function runAddonsBench(): Promise<AddonsBenchResult> {
  const postgres = await startPostgres();
  const db = openDatabase(postgres.url, 10);
  const anvil = await startAnvil({ chainId: 1 });
  const rpc = new RpcClient(anvil.httpUrl);
  try {
    await runMigrations(db);
    const contracts = compileTestTokens(SOLC_CACHE);
    const accounts = (await rpc.call<string[]>("eth_accounts")).map((a) => a.toLowerCase());
    const [deployer, wallet, ...others] = accounts;
    const abi = contracts.TestERC20.abi;
    // 20 tokens, each minted to the deployer.
    const receipts = await sendTransactions(
      rpc,
      Array.from(
        { length: TOKENS },
        (_, i): Transaction => ({
          from: deployer,
          data: encodeDeployData({
            abi,
            bytecode: contracts.TestERC20.bytecode,
            args: [`Bench Token ${i}`, `BT${i}`, 18],
          }),
        }),
      ),
    );
    const tokens = receipts.map((r) => (r.contractAddress ?? "").toLowerCase());
    const many = (from: string, token: string, to: readonly string[]) =>
      contractCall(abi, from, token, "transferMany", [to as Address[], to.map(() => 10n ** 18n)]);
    await sendTransactions(rpc, [
      ...tokens.map((t) => contractCall(abi, deployer, t, "mint", [deployer as Address, 10n ** 30n])),
      ...tokens.map((t) => many(deployer, t, Array(PER_TOKEN_EACH_WAY).fill(wallet))),
    ]);
    await sendTransactions(
      rpc,
      tokens.map((t) =>
        many(
          wallet,
          t,
          Array.from({ length: PER_TOKEN_EACH_WAY }, (_, i) => others[i % others.length]),
        ),
      ),
    );
    // The bulk of the logs for the indexing rate: transfers to 100 recipients, 500 a transaction.
    const recipients = Array.from({ length: 100 }, (_, i) => getAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`));
    await sendTransactions(
      rpc,
      Array.from({ length: BULK_TRANSACTIONS }, (_, i) =>
        many(
          deployer,
          tokens[i % TOKENS],
          Array.from({ length: BULK_PER_TRANSACTION }, (_, j) => recipients[j % recipients.length]),
        ),
      ),
    );
    const head = Number.parseInt(await rpc.call<string>("eth_blockNumber"), 16);
    const store = databaseTokenIndexStore(db.$client);
    const upstreams = staticUpstreams([
      { network: NETWORK, chainId: 1, httpUrl: anvil.httpUrl, wsUrl: anvil.wsUrl, source: "local" },
    ]);
    const log = { info: () => undefined, warn: () => undefined };
    /**
     * PostgreSQL's processes, the server's children at each reading (backends and background): the pool
     * closes a connection idle for 10 s and opens another, which a list made once would not count.
     */
    const backend = (await db.$client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0].pid;
    const postgresPids = siblingPids(backend);
    const cpuNow = (): Cpu => {
      const own = process.cpuUsage();
      return {
        node: (own.user + own.system) / 1000,
        anvil: processCpuMs(anvil.pid),
        postgres: postgresPids().reduce((sum, pid) => sum + processCpuMs(pid), 0),
      };
    };
    const cpuSince = (start: Cpu): Cpu => {
      const now = cpuNow();
      return { node: now.node - start.node, anvil: now.anvil - start.anvil, postgres: now.postgres - start.postgres };
    };

    // 2. Indexing against raw reads, in the same ranges.
    const indexing: AddonsBenchResult["indexing"] = [];
    /** The ranges the indexer read (from its warm-up run): the raw side reads exactly these. */
    const ranges: { from: number; to: number }[] = [];
    const rawRead = async () => {
      const cpu = cpuNow();
      const started = performance.now();
      let logs = 0;
      for (const { from, to } of ranges) {
        const found = await rpc.call<unknown[]>("eth_getLogs", [
          { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, topics: TRANSFER_TOPICS_FILTER },
        ]);
        logs += found.length;
      }
      return { logs, seconds: (performance.now() - started) / 1000, cpu: cpuSince(cpu) };
    };
    const indexRun = async (record = false) => {
      await db.$client.query(
        "truncate token_index_ranges, token_balances, nft_holdings, token_contracts, token_index_cursors",
      );
      let logs = 0;
      const indexer = new TokenIndexer({
        store,
        upstreams,
        networks: [NETWORK],
        log,
        maxRangeBlocks: RANGE_BLOCKS,
        onRange: (r) => {
          logs += r.transfers;
          if (record) ranges.push({ from: r.from, to: r.to });
        },
      });
      const cpu = cpuNow();
      const started = performance.now();
      await indexer.catchUp(NETWORK);
      const seconds = (performance.now() - started) / 1000;
      const used = cpuSince(cpu);
      await indexer.stop();
      return { logs, seconds, cpu: used };
    };
    await indexRun(true);
    // The raw side read once unmeasured too, as the indexer's run above: both sides start warm.
    await rawRead();
    console.log(`indexing: ${ranges.length} ranges of at most ${RANGE_BLOCKS} blocks up to block ${head}`);
    for (let round = 0; round < ROUNDS; round++) {
      const first = round % 2 === 0 ? await rawRead() : await indexRun();
      const second = round % 2 === 0 ? await indexRun() : await rawRead();
      const [raw, indexed] = round % 2 === 0 ? [first, second] : [second, first];
      if (raw.logs !== indexed.logs) throw new Error(`indexed ${indexed.logs} transfers, read ${raw.logs} logs`);
      const rawRate = raw.logs / raw.seconds;
      const indexedRate = indexed.logs / indexed.seconds;
      indexing.push({
        logs: raw.logs,
        indexedLogsPerSec: indexedRate,
        rawLogsPerSec: rawRate,
        ratio: indexedRate / rawRate,
        indexedCpu: indexed.cpu,
        rawCpu: raw.cpu,
      });
      console.log(
        `indexing round ${round + 1}: ${raw.logs} logs; indexed ${Math.round(indexedRate)}/s, raw eth_getLogs ${Math.round(rawRate)}/s, ${(indexedRate / rawRate).toFixed(2)}× (load ${loadText()}); CPU indexed ${cpuText(indexed.cpu)}, raw ${cpuText(raw.cpu)}`,
      );
    }

    // 1. The balances query: the handler against its SQL.
    const method = tokenMethods(store).get("qn_getWalletTokenBalance");
    if (!method) throw new Error("no qn_getWalletTokenBalance");
    const params = [{ wallet, perPage: TOKENS }];
    const sqlParams = walletParams(NETWORK, { wallet, contracts: null, after: null, offset: 0, limit: TOKENS });
    const answer = (await method(params, { network: NETWORK })) as { result: unknown[]; totalItems: number };
    if (answer.result.length !== TOKENS)
      throw new Error(`the wallet has ${answer.result.length} tokens, not ${TOKENS}`);
    const handlerCall = () => method(params, { network: NETWORK });
    const sqlCall = () => db.$client.query(FUNGIBLE_BALANCES_SQL, sqlParams);
    const handlerTimes: number[] = [];
    const sqlTimes: number[] = [];
    const deadline = performance.now() + QUERY_MS;
    while (performance.now() < deadline) {
      for (const [call, times] of [
        [handlerCall, handlerTimes],
        [sqlCall, sqlTimes],
      ] as const) {
        for (let i = 0; i < SLICE; i++) {
          const t = performance.now();
          await call();
          times.push(performance.now() - t);
        }
      }
    }
    const perSecond = (times: number[]) => times.length / (times.reduce((a, b) => a + b, 0) / 1000);
    const c10 = async (call: () => Promise<unknown>) => {
      const started = performance.now();
      let done = 0;
      const until = started + C10_WINDOW_MS;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (performance.now() < until) {
            await call();
            done++;
          }
        }),
      );
      return done / ((performance.now() - started) / 1000);
    };
    const handlerC10: number[] = [];
    const sqlC10: number[] = [];
    // Short windows, alternated, each side's median: the shared machine's load moves in seconds.
    for (let i = 0; i < C10_PAIRS; i++) {
      handlerC10.push(await c10(handlerCall));
      sqlC10.push(await c10(sqlCall));
    }
    return {
      load: loadText(),
      handlerP50Ms: median(handlerTimes),
      sqlP50Ms: median(sqlTimes),
      c1: { handlerRps: perSecond(handlerTimes), sqlRps: perSecond(sqlTimes) },
      c10: { handlerRps: median(handlerC10), sqlRps: median(sqlC10) },
      indexing,
    };
  } finally {
    await rpc.close();
    await anvil.stop();
    await db.$client.end();
    await postgres.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await runAddonsBench(), null, 2));
}
