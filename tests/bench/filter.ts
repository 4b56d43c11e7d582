/**
 * The sandbox against the same code as plain JavaScript in this process, on its two hosts: the stream
 * engine's own thread (InThreadSandbox: how `npm start` runs filters, in the engine's supervised process)
 * and, in rows of their own, the sandbox process (where the API process runs filter tests and every
 * function). Run: `node --no-node-snapshot --import tsx tests/bench/filter.ts` (also `npm run bench --
 * filter`; the flag lets this process load isolated-vm for the bare-isolate baseline).
 *
 * 1. Filters per block. Both sides start from what the engine has — the batch as JSON text from the
 *    node — and end with the JSON text to deliver: plain = JSON.parse + main + JSON.stringify in Node;
 *    sandbox = Filter.run (the text goes to the sandbox process and into the isolate, is parsed there
 *    only if the filter reads it, and an untouched batch that is returned is delivered as the text
 *    passed in; while a filter's calls do not read their batches, the text stays in this process
 *    unless read). The byte count of each batch is passed in, as the engine does. Trivial filters:
 *    pass-through `return stream.data` and skip `return null`; "count txs (reads all)" parses every
 *    transaction. Blocks are shaped like mainnet blocks with full transactions (synthetic values): 1 tx
 *    (~2 KiB) and 150 txs (~108 KiB) per block, 1 and 10 blocks per batch. Targets by shape (decision
 *    0720): a call of 1 block of 1 transaction ≤ 20 µs per block in the sandbox; a batch of 10 blocks
 *    or a block of 150 transactions ≤ 1.3× plain.
 *    Each shape is measured twice: one call at a time (a stream at the tip: its next batch is not
 *    there yet), and with IN_FLIGHT batches' calls made at once (the stream engine in backfill starts
 *    the filter runs of up to 8 batches it has read ahead, see runner.ts; Filter.run sends them without
 *    waiting for the answers before them). The plain side runs the same batches one after another
 *    either way (it has no round trip to share); both figures are per block.
 * 2. Set membership: each transaction's from and to checked against an address book of 100,000
 *    addresses, through qnLib.qnContainsAddressBookItems (in-memory FilterHelpers with itemsSnapshot),
 *    against the same filter with the set as a plain JavaScript Set in plain JS (target ≤ 2×).
 * 3. Function calls (warm isolate per function version, runWarm): p50 and calls per second, against a
 *    bare isolated-vm call of the same main in this process (`apply`, which runs on isolated-vm's
 *    threads like the sandbox, and `applySync` on this thread) (target p50 ≤ 1 ms).
 *
 * The machine is shared: the two sides alternate call by call and each figure is the median of its
 * calls, so both see the same load. Filter rows also give each side's process CPU time per block (the
 * mean over its calls), which the load moves less than the wall time; the targets are on the wall time.
 */
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFilter } from "../../server/dataplane/sandbox/filter.ts";
import { InThreadSandbox } from "../../server/dataplane/sandbox/in-thread.ts";
import { runFiltersOn } from "../../server/dataplane/sandbox/process.ts";
import { DEFAULT_FILTER_LIMITS, type FilterHelpers } from "../../server/dataplane/sandbox/types.ts";

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
export const READS_ALL = "count txs (reads all)";
const sources: Record<string, string> = {
  ...TRIVIAL_FILTERS,
  [READS_ALL]:
    "function main(stream) { let n = 0; for (const b of stream.data) n += b.transactions.length; return { n } }",
};
const SHAPES = [
  [1, 1],
  [1, 10],
  [150, 1],
  [150, 10],
] as const;
/** Calls in flight at once in the backfill rows: as many as the engine starts ahead (FILTER_RUNS_AHEAD). */
export const IN_FLIGHT = 8;
/** Shapes also measured with IN_FLIGHT calls at once (the round trip matters for small batches). */
const IN_FLIGHT_SHAPES = [
  [1, 1],
  [1, 10],
  [150, 1],
] as const;
/** Time per case (both sides together); keeps the whole benchmark under a minute. */
const CASE_MS = Number(process.env.BENCH_FILTER_CASE_MS ?? 1_000);

/** Where filters run: the engine's thread (the engine's own process) or the sandbox process. */
export const FILTER_HOSTS = ["engine thread", "sandbox process"] as const;
export type FilterHost = (typeof FILTER_HOSTS)[number];
// As server/engine.ts does: filters on this thread unless told otherwise (offThread), watched by its thread.
runFiltersOn(
  new InThreadSandbox(
    (message) => {
      throw new Error(`V8 lost control of an isolate: ${message}`);
    },
    join(tmpdir(), `nodeplane-bench-lost-${process.pid}.json`),
  ),
);

export interface FilterBenchRow {
  filter: string;
  host: FilterHost;
  trivial: boolean;
  txPerBlock: number;
  kibPerBlock: number;
  blocksPerBatch: number;
  /** Calls made at once (1: one at a time). */
  inFlight: number;
  plainUsPerBlock: number;
  sandboxUsPerBlock: number;
  ratio: number;
  /**
   * This process's CPU time per block over all the case's calls (the mean, where the figures above are
   * medians); null for the sandbox process's rows, whose calls run mostly in that other process.
   */
  cpu: { plainUsPerBlock: number; sandboxUsPerBlock: number; ratio: number } | null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)];

function plainFunction(source: string, ...bindings: [string, unknown][]): (...a: unknown[]) => unknown {
  // The same source, as a plain JS function in this process.
  return new Function(...bindings.map(([k]) => k), `${source}; return main;`)(...bindings.map(([, v]) => v)) as (
    ...a: unknown[]
  ) => unknown;
}

/** CPU time of this process so far (every thread: isolated-vm's timer and V8's helpers too), in µs. */
function processCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * Alternates `a` and `b` call by call for about `ms` (at least 20 calls each): the time of each call, in
 * µs, and each side's process CPU time over all its calls, in µs (read outside the timed window, so the
 * times are as without it). On this shared machine the wall time moves with the other processes' load
 * more than the CPU time does (a call waiting for the core costs none).
 */
async function sideBySide(
  a: (i: number) => unknown,
  b: (i: number) => unknown,
  ms = CASE_MS,
): Promise<[number[], number[], number, number]> {
  const ta: number[] = [];
  const tb: number[] = [];
  let cpuA = 0;
  let cpuB = 0;
  const end = performance.now() + ms;
  for (let i = 0; ta.length < 20 || performance.now() < end; i++) {
    let cpu = processCpuUs();
    let t = performance.now();
    await a(i);
    ta.push((performance.now() - t) * 1000);
    cpuA += processCpuUs() - cpu;
    cpu = processCpuUs();
    t = performance.now();
    await b(i);
    tb.push((performance.now() - t) * 1000);
    cpuB += processCpuUs() - cpu;
  }
  return [ta, tb, cpuA, cpuB];
}

function batchesOf(txPerBlock: number, blocksPerBatch: number): string[] {
  return Array.from({ length: 8 }, (_, b) =>
    JSON.stringify(Array.from({ length: blocksPerBatch }, (_, i) => block(b * blocksPerBatch + i, txPerBlock))),
  );
}

async function measure(
  label: string,
  source: string,
  txPerBlock: number,
  blocksPerBatch: number,
  inFlight: number,
  host: FilterHost,
): Promise<FilterBenchRow> {
  const batches = batchesOf(txPerBlock, blocksPerBatch);
  const metadata = { dataset: "BLOCK", network: "bench" };
  const plainMain = plainFunction(source);
  const plain = (json: string) => {
    const out = plainMain({ data: JSON.parse(json), metadata });
    return out === null ? null : JSON.stringify(out);
  };
  // As the stream engine creates its filters (runner.ts): the default limits, no heap measure.
  const filter = await createFilter({
    source,
    offThread: host === "sandbox process",
    measureHeap: false,
    owner: "bench",
  });
  // As the stream engine calls it: the batch's byte count is known (the engine counts every batch for
  // its metrics, filter or not), so a batch passed through is not counted again.
  const bytes = new Map(batches.map((json) => [json, Buffer.byteLength(json)]));
  const sandbox = async (json: string) => {
    const r = await filter.run({ data: json, dataBytes: bytes.get(json), metadata });
    if (!r.ok) throw new Error(r.error.message);
    return r.resultJson;
  };
  // Warm up, and check both sides deliver the same JSON.
  for (let i = 0; i < 20; i++) {
    const json = batches[i % batches.length];
    const [a, b] = [plain(json), await sandbox(json)];
    if (a !== b) throw new Error(`${label}: sandbox and plain results differ`);
  }
  // One sample: `inFlight` consecutive batches, the sandbox's calls made at once, the plain ones in turn.
  const group = (i: number) => Array.from({ length: inFlight }, (_, k) => batches[(i * inFlight + k) % batches.length]);
  const [plainRuns, sandboxRuns, plainCpu, sandboxCpu] = await sideBySide(
    (i) => {
      for (const json of group(i)) plain(json);
    },
    (i) => Promise.all(group(i).map(sandbox)),
  );
  filter.dispose();
  const plainUs = median(plainRuns) / blocksPerBatch / inFlight;
  const sandboxUs = median(sandboxRuns) / blocksPerBatch / inFlight;
  // Both sides made as many samples (sideBySide alternates them).
  const blocks = plainRuns.length * blocksPerBatch * inFlight;
  return {
    filter: label,
    host,
    trivial: label in TRIVIAL_FILTERS,
    txPerBlock,
    kibPerBlock: Buffer.byteLength(batches[0]) / blocksPerBatch / 1024,
    blocksPerBatch,
    inFlight,
    plainUsPerBlock: plainUs,
    sandboxUsPerBlock: sandboxUs,
    ratio: sandboxUs / plainUs,
    cpu:
      host === "engine thread"
        ? { plainUsPerBlock: plainCpu / blocks, sandboxUsPerBlock: sandboxCpu / blocks, ratio: sandboxCpu / plainCpu }
        : null,
  };
}

export function formatFilterRow(r: FilterBenchRow): string {
  return [
    r.filter.padEnd(22),
    r.host.padEnd(15),
    `${String(r.txPerBlock).padStart(4)} tx/block (${r.kibPerBlock.toFixed(1).padStart(6)} KiB)`,
    `${String(r.blocksPerBatch).padStart(3)} blocks/batch`,
    r.inFlight === 1 ? "one call at a time " : `${r.inFlight} calls in flight `,
    `plain ${r.plainUsPerBlock.toFixed(1).padStart(8)} µs/block`,
    `sandbox ${r.sandboxUsPerBlock.toFixed(1).padStart(8)} µs/block`,
    `${r.ratio.toFixed(2).padStart(6)}×`,
    r.cpu
      ? `CPU ${r.cpu.plainUsPerBlock.toFixed(1)} / ${r.cpu.sandboxUsPerBlock.toFixed(1)} µs/block ${r.cpu.ratio.toFixed(2)}×`
      : "",
  ].join("  ");
}

export async function runFilterBench(log: (line: string) => void = console.log): Promise<FilterBenchRow[]> {
  const rows: FilterBenchRow[] = [];
  for (const [label, source] of Object.entries(sources)) {
    const cases = [
      ...SHAPES.map(([tx, batch]) => [tx, batch, 1] as const),
      ...IN_FLIGHT_SHAPES.map(([tx, batch]) => [tx, batch, IN_FLIGHT] as const),
    ];
    for (const [tx, batch, inFlight] of cases) {
      for (const host of FILTER_HOSTS) {
        const row = await measure(label, source, tx, batch, inFlight, host);
        rows.push(row);
        log(`  ${formatFilterRow(row)}`);
      }
    }
  }
  return rows;
}

// --------------------------------------------------------------------------------------------- floor

export interface FloorRow {
  txPerBlock: number;
  blocksPerBatch: number;
  plainUsPerBlock: number;
  /** A bare isolated-vm call: the batch copied in, parsed, main, the result copied out; no limits. */
  bareUsPerBlock: number;
  /** The same with a time limit (isolated-vm's per-call timer), as every sandboxed call has. */
  timedUsPerBlock: number;
}

/**
 * What any V8-isolate sandbox pays before any bookkeeping of ours: the "reads all" filter as a bare
 * isolated-vm call on this thread (applySync; the batch passed as the sandbox passes it on this thread, parsed,
 * main, the result stringified and copied out), without and with a time limit, against plain JS on the same
 * batches. Where the bare call is already over 1.3× plain, no sandbox built on isolates can be under it.
 */
export async function runFloorBench(log: (line: string) => void = console.log): Promise<FloorRow[]> {
  const { newIsolate } = await import("../../server/dataplane/sandbox/isolates.ts");
  const source = sources[READS_ALL];
  // As the sandbox creates its isolates (its memory limit and young generation), with nothing else of it.
  const isolate = newIsolate(DEFAULT_FILTER_LIMITS.memoryBytes / 1024 / 1024);
  const context = isolate.createContextSync();
  const bare = context.evalSync(
    `${source}; (function (text, meta) { return JSON.stringify(main({ data: JSON.parse(text), metadata: JSON.parse(meta) })) })`,
    { reference: true },
  ) as import("isolated-vm").Reference<(text: string, meta: string) => string>;
  const plainMain = plainFunction(source);
  const meta = JSON.stringify({ dataset: "BLOCK", network: "bench" });
  const plainOn =
    (batches: string[]) =>
    (i: number): string =>
      JSON.stringify(plainMain({ data: JSON.parse(batches[i % batches.length]), metadata: JSON.parse(meta) }));
  const rows: FloorRow[] = [];
  for (const [tx, perBatch] of SHAPES) {
    const batches = batchesOf(tx, perBatch);
    const plain = plainOn(batches);
    // As the sandbox passes a batch on this thread: a string argument (see BOXED_MAX_CHARS in isolates.ts).
    const call = (i: number, timeout?: number) =>
      bare.applySync(undefined, [batches[i % batches.length], meta], { timeout });
    const untimed = (i: number) => call(i);
    const timed = (i: number) => call(i, 1_000);
    for (let i = 0; i < 20; i++)
      if (plain(i) !== untimed(i) || plain(i) !== timed(i)) throw new Error("floor: results differ");
    const [p1, u] = await sideBySide(plain, untimed, CASE_MS / 2);
    const [p2, t] = await sideBySide(plain, timed, CASE_MS / 2);
    const row = {
      txPerBlock: tx,
      blocksPerBatch: perBatch,
      plainUsPerBlock: median([...p1, ...p2]) / perBatch,
      bareUsPerBlock: median(u) / perBatch,
      timedUsPerBlock: median(t) / perBatch,
    };
    rows.push(row);
    log(
      `  ${String(tx).padStart(4)} tx/block  ${String(perBatch).padStart(2)} blocks/batch  plain ${row.plainUsPerBlock.toFixed(1).padStart(7)} µs/block  bare isolate call ${row.bareUsPerBlock.toFixed(1).padStart(7)} (${(row.bareUsPerBlock / row.plainUsPerBlock).toFixed(2)}×)  with a time limit ${row.timedUsPerBlock.toFixed(1).padStart(7)} (${(row.timedUsPerBlock / row.plainUsPerBlock).toFixed(2)}×)`,
    );
  }
  // Below any sandbox's call: entering the isolate with nothing to copy and nothing to run.
  const empty = context.evalSync("(function () { return 0 })", { reference: true }) as import("isolated-vm").Reference<
    () => number
  >;
  const [p, e] = await sideBySide(
    plainOn(batchesOf(1, 1)),
    () => empty.applySync(undefined, [], { timeout: 1_000 }),
    CASE_MS / 2,
  );
  log(
    `  an empty isolate call with a time limit: ${median(e).toFixed(1)} µs, ${(median(e) / median(p)).toFixed(2)}× of the plain filter's whole work on 1 tx × 1 block (${median(p).toFixed(1)} µs)`,
  );
  isolate.dispose();
  return rows;
}

// ---------------------------------------------------------------------------------------------- sets

export const SET_SIZE = 100_000;
const SET_FILTER = `async function main(stream) {
  const addresses = [];
  for (const b of stream.data) for (const tx of b.transactions) addresses.push(tx.from, tx.to);
  const hits = await qnLib.qnContainsAddressBookItems("watched", addresses);
  const out = [];
  let i = 0;
  for (const b of stream.data) for (const tx of b.transactions) { if (hits[i] || hits[i + 1]) out.push(tx.hash); i += 2; }
  return out.length ? out : null;
}`;
const SET_PLAIN = `function main(stream) {
  const out = [];
  for (const b of stream.data) for (const tx of b.transactions) if (WATCHED.has(tx.from) || WATCHED.has(tx.to)) out.push(tx.hash);
  return out.length ? out : null;
}`;

export interface SetBenchRow {
  txPerBlock: number;
  blocksPerBatch: number;
  plainUsPerBlock: number;
  sandboxUsPerBlock: number;
  ratio: number;
}

/** Blocks whose transactions have, one in ten, a `from` or `to` in the returned address book. */
function setCase(txPerBlock: number, blocksPerBatch: number) {
  const batches = Array.from({ length: 8 }, (_, b) =>
    Array.from({ length: blocksPerBatch }, (_, i) => block(b * blocksPerBatch + i, txPerBlock)),
  );
  const book = Array.from({ length: SET_SIZE }, () => hex(20));
  let k = 0;
  for (const batch of batches)
    for (const b of batch)
      for (const tx of b.transactions) {
        if (k % 10 === 0) tx.to = book[k % SET_SIZE];
        k++;
      }
  return { batches: batches.map((b) => JSON.stringify(b)), book };
}

export async function runSetBench(log: (line: string) => void = console.log): Promise<SetBenchRow[]> {
  const rows: SetBenchRow[] = [];
  for (const [tx, perBatch] of [
    [150, 1],
    [150, 10],
  ] as const) {
    const { batches, book } = setCase(tx, perBatch);
    let snapshots = 0;
    const helpers = {
      itemsSnapshot: async (key: string, known: number | null) => {
        snapshots++;
        if (key !== "watched") return { version: 0, items: [] };
        return { version: 1, items: known === 1 ? null : book };
      },
    } as Partial<FilterHelpers> as FilterHelpers;
    const watched = new Set(book);
    const plainMain = plainFunction(SET_PLAIN, ["WATCHED", watched]);
    const plain = (json: string) => {
      const out = plainMain({ data: JSON.parse(json), metadata: {} });
      return out === null ? null : JSON.stringify(out);
    };
    const filter = await createFilter({ source: SET_FILTER, helpers, measureHeap: false, owner: "bench" });
    const sandbox = async (json: string) => {
      const r = await filter.run({ data: json, metadata: {} });
      if (!r.ok) throw new Error(r.error.message);
      return r.resultJson;
    };
    for (let i = 0; i < 10; i++) {
      const json = batches[i % batches.length];
      if (plain(json) !== (await sandbox(json))) throw new Error("set filter: sandbox and plain results differ");
    }
    const before = snapshots;
    const [p, s] = await sideBySide(
      (i) => plain(batches[i % batches.length]),
      (i) => sandbox(batches[i % batches.length]),
    );
    if (snapshots - before !== s.length) throw new Error("set filter: expected one snapshot question per call");
    filter.dispose();
    const row = {
      txPerBlock: tx,
      blocksPerBatch: perBatch,
      plainUsPerBlock: median(p) / perBatch,
      sandboxUsPerBlock: median(s) / perBatch,
      ratio: median(s) / median(p),
    };
    rows.push(row);
    log(
      `  set of ${SET_SIZE} addresses  ${tx} tx/block  ${String(perBatch).padStart(2)} blocks/batch  plain Set ${row.plainUsPerBlock.toFixed(1).padStart(8)} µs/block  sandbox qnLib ${row.sandboxUsPerBlock.toFixed(1).padStart(8)} µs/block  ${row.ratio.toFixed(2)}×`,
    );
  }
  return rows;
}

// ----------------------------------------------------------------------------------------- functions

const FUNCTION_SOURCE = "function main(params) { return { sum: params.data.a + params.data.b, n: params.data.n } }";

export interface FunctionBenchRow {
  subject: string;
  p50Us: number;
  p99Us: number;
  callsPerSecond: number;
}

export async function runFunctionBench(log: (line: string) => void = console.log): Promise<FunctionBenchRow[]> {
  const { runWarm } = await import("../../server/dataplane/sandbox/warm.ts");
  const { newIsolate } = await import("../../server/dataplane/sandbox/isolates.ts");
  const key = { accountId: "bench", functionId: "sum" };
  const options = {
    source: FUNCTION_SOURCE,
    version: "V4" as const,
    limits: { timeoutMs: 10_000 },
    owner: key.accountId,
  };
  const input = (i: number) => ({ data: JSON.stringify({ a: i, b: 2, n: "x" }), metadata: {} });
  const warm = async (i: number) => {
    const r = await runWarm(key, options, input(i));
    if (!r.ok) throw new Error(r.error.message);
    return r.resultJson;
  };
  // The bare baseline: the same main in an isolate of this process, JSON text in and out.
  const isolate = newIsolate(64);
  const context = isolate.createContextSync();
  const bare = context.evalSync(
    `${FUNCTION_SOURCE}; (function (text) { return JSON.stringify(main({ data: JSON.parse(text) })) })`,
    {
      reference: true,
    },
  ) as import("isolated-vm").Reference<(text: string) => string>;
  const bareAsync = (i: number) => bare.apply(undefined, [input(i).data], { timeout: 10_000 });
  const bareSync = (i: number) => bare.applySync(undefined, [input(i).data], { timeout: 10_000 });
  for (let i = 0; i < 200; i++) {
    if ((await warm(i)) !== (await bareAsync(i))) throw new Error("function: sandbox and bare results differ");
    bareSync(i);
  }
  const [w, a] = await sideBySide(warm, bareAsync, 2 * CASE_MS);
  const [, sync] = await sideBySide(warm, bareSync, CASE_MS / 2);
  isolate.dispose();
  const row = (subject: string, xs: number[]): FunctionBenchRow => ({
    subject,
    p50Us: median(xs),
    p99Us: quantile(xs, 0.99),
    callsPerSecond: 1e6 / (xs.reduce((x, y) => x + y, 0) / xs.length),
  });
  const rows = [
    row("warm function (sandbox)", w),
    row("bare isolate call, apply (isolated-vm's threads)", a),
    row("bare isolate call, applySync (this thread)", sync),
  ];
  for (const r of rows) {
    log(
      `  ${r.subject.padEnd(50)}  p50 ${r.p50Us.toFixed(1).padStart(7)} µs  p99 ${r.p99Us.toFixed(1).padStart(8)} µs  ${Math.round(r.callsPerSecond).toString().padStart(7)} calls/s (one at a time)`,
    );
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log("filters per block (sandbox against plain JS):");
  await runFilterBench();
  console.log("\nthe floor: a bare isolate call against plain JS");
  await runFloorBench();
  console.log(`\nset membership (${SET_SIZE} addresses):`);
  await runSetBench();
  console.log("\nfunction calls:");
  await runFunctionBench();
}
