/**
 * The chain-tip benchmark's clock, run as its own process so that everything timed is timed on one clock
 * outside the engine's thread (tests/bench/tip.ts drives it over IPC). It is three things:
 * - the miner: anvil runs without a block time and this process mines a block per interval (evm_mine),
 *   at a moment within the interval drawn from a seeded generator (the same each run): a block a second
 *   on average, and a poller's phase does not stay fixed against the blocks (with both at exactly 1 s, a
 *   poller's delay is whatever phase it started at). The moment a block can first appear on the node is
 *   known to the millisecond (the request's sending);
 * - a plain WebSocket client subscribed to the node's newHeads: when the node's own notification of
 *   each block arrives (the floor for anything that learns of blocks by push);
 * - the webhook receiver: it answers every POST with 200 and notes when the answer was written, per block.
 * Argument: the node's HTTP URL. Messages: on start `{ type: "ready", port }` (receiver listening, newHeads
 * subscribed); `{ type: "mine", count, intervalMs }` is answered, once every mined block was answered by
 * the receiver or 10 s after the last, by `{ type: "mined", blocks }` (see MinedBlock; times in ms on this
 * process's clock).
 */
import { createServer } from "node:http";
import { WebSocket } from "ws";

export interface MinedBlock {
  number: number;
  /** evm_mine sent. */
  minedAt: number;
  /** The node's newHeads notification arrived at the plain client (null: never). */
  headAt: number | null;
  /** The webhook receiver wrote its answer to the engine's POST of this block (null: never came). */
  answeredAt: number | null;
}

type Command = { type: "mine"; count: number; intervalMs: number };

const httpUrl = process.argv[2];
const wsUrl = httpUrl.replace(/^http/, "ws");
const send = (message: object) => process.send?.(message);
const headAt = new Map<number, number>();
const answeredAt = new Map<number, number>();

async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(httpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    res.end("ok");
    const at = performance.now();
    const blocks = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { number: string }[];
    for (const b of blocks) answeredAt.set(Number.parseInt(b.number, 16), at);
  });
});

const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
const subscribed = new Promise<void>((resolve, reject) => {
  ws.once("error", reject);
  ws.on("open", () => ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}'));
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString()) as { id?: number; params?: { result?: { number: string } } };
    if (message.id === 1) resolve();
    else if (message.params?.result) headAt.set(Number.parseInt(message.params.result.number, 16), performance.now());
  });
});

/** mulberry32: a small seeded generator of numbers in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const within = seeded(18);

async function mine(count: number, intervalMs: number): Promise<MinedBlock[]> {
  const first = Number.parseInt(await rpc<string>("eth_blockNumber"), 16) + 1;
  const mined: { number: number; minedAt: number }[] = [];
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    // On a schedule, not after the previous answer: a block per interval, as a node's block time.
    const due = start + (i + within()) * intervalMs;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    mined.push({ number: first + i, minedAt: performance.now() });
    await rpc("evm_mine");
  }
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline && mined.some((b) => !answeredAt.has(b.number)))
    await new Promise((r) => setTimeout(r, 50));
  return mined.map((b) => ({
    ...b,
    headAt: headAt.get(b.number) ?? null,
    answeredAt: answeredAt.get(b.number) ?? null,
  }));
}

process.on("message", (command: Command) => {
  void mine(command.count, command.intervalMs).then((blocks) => send({ type: "mined", blocks }));
});
process.on("disconnect", () => {
  ws.terminate();
  server.close(() => process.exit(0));
});

await subscribed;
server.listen(0, "127.0.0.1", () => send({ type: "ready", port: (server.address() as { port: number }).port }));
