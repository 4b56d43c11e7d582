/**
 * Filter overhead per block: the QuickJS sandbox against the same function called as plain JS in this
 * process, on the same blocks. Run: `node --import tsx tests/bench/filter.ts` (also `npm run bench`).
 * Target: at most 0.1 ms of overhead per block for a trivial filter.
 *
 * "Trivial filter" means two filters, both measured: pass-through `return stream.data` and skip
 * `return null` (a filter deciding on metadata alone). For them the whole sandbox cost is overhead, so
 * the target is checked on the sandbox's total time per block (stricter than sandbox − plain). A real
 * filter (count transactions, reading every block) is measured beside them for information.
 *
 * Both sides start from what the engine has — the batch as JSON text from the node — and end with the
 * JSON text to deliver: plain = JSON.parse + main + JSON.stringify in Node; sandbox = Filter.run (the
 * text is copied into QuickJS and parsed there only if the filter reads it; an untouched batch that is
 * returned is delivered as the text passed in). Blocks are shaped like mainnet blocks with full
 * transactions (synthetic values): 1 tx (~2 KiB) and 150 txs (~108 KiB) per block, 1 and 10 blocks per
 * batch. Plain and sandbox alternate in rounds; each figure is the median of its rounds.
 */
import { randomBytes } from "node:crypto";
import { createFilter } from "../../server/dataplane/sandbox/filter.ts";

const hex = (bytes: number) => `0x${randomBytes(bytes).toString("hex")}`;
const num = (n: number) => `0x${n.toString(16)}`;

function block(n: number, txCount: number) {
  const transactions = Array.from({ length: txCount }, (_, i) => ({
    blockHash: hex(32),
    blockNumber: num(n),
    from: hex(20),
    gas: num(21000 + i),
    gasPrice: num(30e9),
    maxFeePerGas: num(40e9),
    maxPriorityFeePerGas: num(1e9),
    hash: hex(32),
    input: i % 3 === 0 ? hex(68) : "0x",
    nonce: num(i),
    to: hex(20),
    transactionIndex: num(i),
    value: num(i * 1e15),
    type: "0x2",
    accessList: [],
    chainId: "0x1",
    v: "0x1",
    r: hex(32),
    s: hex(32),
    yParity: "0x1",
  }));
  return {
    number: num(n),
    hash: hex(32),
    parentHash: hex(32),
    miner: hex(20),
    stateRoot: hex(32),
    transactionsRoot: hex(32),
    receiptsRoot: hex(32),
    logsBloom: hex(256),
    gasLimit: num(30e6),
    gasUsed: num(12e6),
    timestamp: num(1.7e9 + n),
    baseFeePerGas: num(20e9),
    extraData: "0x",
    transactions,
  };
}

export const TRIVIAL_FILTERS = {
  "pass-through": "function main(stream) { return stream.data }",
  "skip (return null)": "function main(stream) { return null }",
} as const;
const sources: Record<string, string> = {
  ...TRIVIAL_FILTERS,
  "count txs (reads all)":
    "function main(stream) { let n = 0; for (const b of stream.data) n += b.transactions.length; return { n } }",
};
const SHAPES = [
  [1, 1],
  [1, 10],
  [150, 1],
  [150, 10],
] as const;
const ROUNDS = 3;
/** Time each side gets per round and case; keeps the whole benchmark around 15 s. */
const ROUND_MS = Number(process.env.BENCH_FILTER_ROUND_MS ?? 100);

export interface FilterBenchRow {
  filter: string;
  trivial: boolean;
  txPerBlock: number;
  kibPerBlock: number;
  blocksPerBatch: number;
  plainUsPerBlock: number;
  sandboxUsPerBlock: number;
  overheadUsPerBlock: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function plainFunction(source: string): (s: unknown) => unknown {
  // The same source, as a plain JS function in this process.
  return new Function(`${source}; return main;`)() as (s: unknown) => unknown;
}

/** Runs `one` for about ROUND_MS (at least 3 times); µs per block. */
async function timedLoop(one: (i: number) => unknown, blocksPerBatch: number): Promise<number> {
  let n = 0;
  const t = performance.now();
  let elapsed = 0;
  while (n < 3 || elapsed < ROUND_MS) {
    await one(n++);
    elapsed = performance.now() - t;
  }
  return (elapsed * 1000) / (n * blocksPerBatch);
}

async function measure(label: string, source: string, txPerBlock: number, blocksPerBatch: number) {
  const batches = Array.from({ length: 8 }, (_, b) =>
    JSON.stringify(Array.from({ length: blocksPerBatch }, (_, i) => block(b * blocksPerBatch + i, txPerBlock))),
  );
  const metadata = { dataset: "BLOCK", network: "bench" };
  const plainMain = plainFunction(source);
  const plain = (json: string) => {
    const out = plainMain({ data: JSON.parse(json), metadata });
    return out === null ? null : JSON.stringify(out);
  };
  const filter = await createFilter({ source, limits: { memoryBytes: 256 * 1024 * 1024 } });
  const sandbox = async (json: string) => {
    const r = await filter.run({ data: json, metadata });
    if (!r.ok) throw new Error(r.error.message);
    return r.resultJson;
  };
  // Warm up, and check both sides deliver the same JSON.
  for (let i = 0; i < 5; i++) {
    const json = batches[i % batches.length];
    const [a, b] = [plain(json), await sandbox(json)];
    if (a !== b) throw new Error(`${label}: sandbox and plain results differ`);
  }
  const plainRuns: number[] = [];
  const sandboxRuns: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    plainRuns.push(await timedLoop((i) => plain(batches[i % batches.length]), blocksPerBatch));
    sandboxRuns.push(await timedLoop((i) => sandbox(batches[i % batches.length]), blocksPerBatch));
  }
  filter.dispose();
  const plainUs = median(plainRuns);
  const sandboxUs = median(sandboxRuns);
  return {
    filter: label,
    trivial: label in TRIVIAL_FILTERS,
    txPerBlock,
    kibPerBlock: Buffer.byteLength(batches[0]) / blocksPerBatch / 1024,
    blocksPerBatch,
    plainUsPerBlock: plainUs,
    sandboxUsPerBlock: sandboxUs,
    overheadUsPerBlock: sandboxUs - plainUs,
  };
}

export function formatFilterRow(r: FilterBenchRow): string {
  return [
    r.filter.padEnd(22),
    `${String(r.txPerBlock).padStart(4)} tx/block (${r.kibPerBlock.toFixed(1).padStart(6)} KiB)`,
    `${String(r.blocksPerBatch).padStart(3)} blocks/batch`,
    `plain ${r.plainUsPerBlock.toFixed(1).padStart(8)} µs/block`,
    `sandbox ${r.sandboxUsPerBlock.toFixed(1).padStart(8)} µs/block`,
    `sandbox − plain ${r.overheadUsPerBlock.toFixed(1).padStart(8)} µs/block`,
  ].join("  ");
}

/** The worst sandbox time per block of a trivial filter (the checked figure), with its row. */
export function worstTrivial(rows: FilterBenchRow[]): FilterBenchRow {
  return rows.filter((r) => r.trivial).sort((a, b) => b.sandboxUsPerBlock - a.sandboxUsPerBlock)[0];
}

export async function runFilterBench(log: (line: string) => void = console.log): Promise<FilterBenchRow[]> {
  const rows: FilterBenchRow[] = [];
  for (const [label, source] of Object.entries(sources)) {
    for (const [tx, batch] of SHAPES) {
      const row = await measure(label, source, tx, batch);
      rows.push(row);
      log(`  ${formatFilterRow(row)}`);
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(
    "filter cost per block; trivial filters = pass-through `return stream.data` and skip `return null` (target: sandbox ≤ 100 µs/block)\n",
  );
  const rows = await runFilterBench();
  for (const label of Object.keys(TRIVIAL_FILTERS)) {
    const mine = rows.filter((r) => r.filter === label);
    const worst = Math.max(...mine.map((r) => r.sandboxUsPerBlock));
    console.log(`${label}: worst ${worst.toFixed(1)} µs/block in the sandbox: ${worst <= 100 ? "met" : "NOT met"}`);
  }
}
