/**
 * Filter overhead per block: the QuickJS sandbox against the same function called as plain JS in this
 * process, on the same blocks. Run: `node --import tsx tests/bench/filter.ts`. Target: at most 0.1 ms
 * of overhead per block.
 *
 * Both sides start from what the engine has — the batch as JSON text from the node — and end with the
 * JSON text to deliver: plain = JSON.parse + main + JSON.stringify in Node; sandbox = Filter.run (the
 * text is copied into QuickJS, parsed and stringified there). Blocks are shaped like mainnet blocks with
 * full transactions (synthetic values).
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

const sources = {
  "skip (return null)": "function main(stream) { return null }",
  "pass-through": "function main(stream) { return stream.data }",
  "count txs":
    "function main(stream) { let n = 0; for (const b of stream.data) n += b.transactions.length; return { n } }",
};

function plainFunction(source: string): (s: unknown) => unknown {
  // The same source, as a plain JS function in this process.
  return new Function(`${source}; return main;`)() as (s: unknown) => unknown;
}

async function measure(label: string, source: string, txPerBlock: number, blocksPerBatch: number) {
  const batches = Array.from({ length: 20 }, (_, b) =>
    JSON.stringify(Array.from({ length: blocksPerBatch }, (_, i) => block(b * blocksPerBatch + i, txPerBlock))),
  );
  const metadata = { dataset: "BLOCK", network: "bench" };
  const plainMain = plainFunction(source);
  const plain = (json: string) => {
    const out = plainMain({ data: JSON.parse(json), metadata });
    return out === null ? null : JSON.stringify(out);
  };
  const filter = await createFilter({ source, limits: { memoryBytes: 256 * 1024 * 1024 } });
  const iterations = Math.max(50, Math.round(4000 / (blocksPerBatch * Math.max(1, txPerBlock / 10))));

  for (let i = 0; i < 20; i++) {
    plain(batches[i % batches.length]);
    const r = await filter.run({ data: batches[i % batches.length], metadata });
    if (!r.ok) throw new Error(r.error.message);
  }
  let t = performance.now();
  for (let i = 0; i < iterations; i++) plain(batches[i % batches.length]);
  const plainUs = ((performance.now() - t) * 1000) / (iterations * blocksPerBatch);
  t = performance.now();
  for (let i = 0; i < iterations; i++) await filter.run({ data: batches[i % batches.length], metadata });
  const sandboxUs = ((performance.now() - t) * 1000) / (iterations * blocksPerBatch);
  filter.dispose();
  const kb = Buffer.byteLength(batches[0]) / blocksPerBatch / 1024;
  console.log(
    [
      label.padEnd(20),
      `${String(txPerBlock).padStart(4)} tx/block (${kb.toFixed(1).padStart(6)} KiB)`,
      `${String(blocksPerBatch).padStart(3)} blocks/batch`,
      `plain ${plainUs.toFixed(1).padStart(8)} µs/block`,
      `sandbox ${sandboxUs.toFixed(1).padStart(8)} µs/block`,
      `overhead ${(sandboxUs - plainUs).toFixed(1).padStart(8)} µs/block`,
      `ratio ${(sandboxUs / plainUs).toFixed(1).padStart(5)}x`,
    ].join("  "),
  );
  return sandboxUs - plainUs;
}

console.log("filter overhead per block (target ≤ 100 µs)\n");
const trivial: number[] = [];
for (const [label, source] of Object.entries(sources)) {
  for (const [tx, batch] of [
    [1, 1],
    [1, 10],
    [150, 1],
    [150, 10],
  ] as const) {
    const overhead = await measure(label, source, tx, batch);
    if (label === "skip (return null)") trivial.push(overhead);
  }
}
console.log(
  `\ntrivial filter overhead: ${trivial.map((o) => `${o.toFixed(1)} µs`).join(", ")} per block ` +
    `(1 tx×1, 1 tx×10, 150 tx×1, 150 tx×10 blocks/batch)`,
);
