/**
 * The streams benchmark's webhook receiver, run as its own process (as a real receiver is), so it does
 * not share the engine's thread. It answers every POST with 200 and counts arrivals. Driven over IPC by
 * tests/bench/streams.ts:
 * - `{ type: "expect", n }`: start counting from zero; answered `{ type: "expecting" }`. Once n requests
 *   have arrived it sends `{ type: "arrived", firstMs, lastMs }` (its own clock: only the difference counts).
 * - `{ type: "count" }`: answered `{ type: "count", count }`, the arrivals since the last expect.
 * On start it sends `{ type: "listening", port }`.
 */
import { createServer } from "node:http";

type Command = { type: "expect"; n: number } | { type: "count" };

const send = (message: object) => process.send?.(message);
let expected = Number.POSITIVE_INFINITY;
let count = 0;
let firstMs = 0;
let lastMs = 0;

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.end("ok");
    const now = performance.now();
    if (count === 0) firstMs = now;
    lastMs = now;
    if (++count === expected) send({ type: "arrived", firstMs, lastMs });
  });
});

process.on("message", (command: Command) => {
  if (command.type === "expect") {
    expected = command.n;
    count = 0;
    send({ type: "expecting" });
  } else send({ type: "count", count });
});
process.on("disconnect", () => server.close(() => process.exit(0)));

server.listen(0, "127.0.0.1", () => send({ type: "listening", port: (server.address() as { port: number }).port }));
