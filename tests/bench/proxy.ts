/**
 * The RPC proxy benchmark (`npm run bench`, or `node --import tsx tests/bench/proxy.ts`).
 * Load comes from this process; anvil and each proxy run in processes of their own. Targets: anvil direct,
 * a plain node:http + undici proxy, @fastify/http-proxy, our proxy with nothing enabled, our proxy with all
 * features on (token auth, an IP rule, the service's rate-limit stage with a limiter far above the load and
 * its meter writing to a real PostgreSQL, started here in a temporary directory and removed after), and the
 * same with stand-in stages (an in-memory limiter and counter) beside it. BENCH_BEFORE_ROOT=<another
 * checkout> adds that checkout's "nothing on", stand-in and all-features servers (the last on a second
 * database of the same PostgreSQL), to compare a change with what it replaced in the same run. Throughput is autocannon's;
 * latency is measured here with a sub-millisecond clock (autocannon's histogram has 1 ms steps), every target
 * in turn in blocks of 100 requests, so the added latency over direct compares requests sent side by side.
 * The machine is shared, so targets are measured in interleaved rounds and each figure is the median of
 * its rounds. BENCH_SECONDS sets each throughput run's length (default 3), BENCH_ROUNDS the rounds (default 3).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Agent, request } from "node:http";
import path from "node:path";
import autocannon from "autocannon";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { startPostgres } from "./postgres.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const root = path.resolve(import.meta.dirname, "../..");

const bodies = {
  eth_blockNumber: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  eth_getBlockByNumber: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_getBlockByNumber",
    params: ["latest", false],
  }),
};
type Method = keyof typeof bodies;

interface Target {
  name: string;
  url: string;
  stop(): Promise<void>;
}

function startServer(
  kind: string,
  args: string[],
  from: string,
): Promise<{ child: ChildProcess; port: number; path: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(from, "tests/bench/proxy-servers.ts"), kind, ...args],
      {
        cwd: from,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+) (\S+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), path: m[2] });
    });
    child.once("exit", (code) => reject(new Error(`${kind} exited with ${code}`)));
  });
}

async function serverTarget(name: string, kind: string, args: string[], from = root): Promise<Target> {
  const { child, port, path: p } = await startServer(kind, args, from);
  return {
    name,
    url: `http://127.0.0.1:${port}${p}`,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

async function throughput(url: string, method: Method, connections: number): Promise<number> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: bodies[method],
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  // The total over the run's measured length: autocannon's per-second average can count a late second
  // twice when the load generator shares the CPU (one run reported anvil at 3× its rate).
  return result.requests.total / result.duration;
}

/** How many requests each target gets in turn when latencies are measured side by side. */
const LATENCY_BLOCK = 100;

/**
 * Latency percentiles in ms for every target, from `connections` keep-alive loops per target sending one
 * request at a time. The targets take turns in blocks of LATENCY_BLOCK requests, so a change in the shared
 * machine's load during the run falls on all of them alike and "added over direct" compares like with like.
 */
async function latencies(
  urls: string[],
  method: Method,
  connections: number,
  perLoop: number,
): Promise<{ p50: number; p99: number }[]> {
  const body = bodies[method];
  const clients = urls.map((url) => ({
    agent: new Agent({ keepAlive: true, maxSockets: connections }),
    target: new URL(url),
    samples: [] as number[],
  }));
  const one = (client: (typeof clients)[number]) =>
    new Promise<number>((resolve, reject) => {
      const start = process.hrtime.bigint();
      const req = request(
        {
          host: client.target.hostname,
          port: client.target.port,
          path: client.target.pathname,
          method: "POST",
          agent: client.agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => resolve(Number(process.hrtime.bigint() - start) / 1e6));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  for (const client of clients) for (let i = 0; i < 200; i++) await one(client);
  for (let done = 0; done < perLoop; done += LATENCY_BLOCK) {
    const count = Math.min(LATENCY_BLOCK, perLoop - done);
    for (const client of clients) {
      await Promise.all(
        Array.from({ length: connections }, async () => {
          for (let i = 0; i < count; i++) client.samples.push(await one(client));
        }),
      );
    }
  }
  return clients.map((client) => {
    client.agent.destroy();
    const sorted = client.samples.sort((a, b) => a - b);
    return { p50: sorted[Math.floor(sorted.length * 0.5)], p99: sorted[Math.floor(sorted.length * 0.99)] };
  });
}

interface Row {
  target: string;
  method: Method;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
}

export async function runProxyBench(): Promise<Row[]> {
  const node: AnvilNode = await startAnvil({ chainId: 11155111 });
  const targets: Target[] = [{ name: "anvil direct", url: `${node.httpUrl}/`, stop: async () => {} }];
  let postgres: Awaited<ReturnType<typeof startPostgres>> | undefined;
  const before = process.env.BENCH_BEFORE_ROOT;
  try {
    postgres = await startPostgres();
    targets.push(await serverTarget("plain node proxy", "plain", [node.httpUrl]));
    targets.push(await serverTarget("@fastify/http-proxy", "fastify-http-proxy", [node.httpUrl]));
    targets.push(await serverTarget("ours, nothing on", "ours", [node.httpUrl]));
    targets.push(await serverTarget("ours, all features", "ours-real", [node.httpUrl, postgres.url]));
    targets.push(await serverTarget("ours, stand-in stages", "ours-full", [node.httpUrl]));
    if (before) {
      targets.push(await serverTarget("before: nothing on", "ours", [node.httpUrl], before));
      targets.push(await serverTarget("before: stand-in", "ours-full", [node.httpUrl], before));
      // The subject's own "before", on a database of its own (each seeds the same account).
      const beforeDatabase = await postgres.createDatabase("bench_before");
      targets.push(await serverTarget("before: all features", "ours-real", [node.httpUrl, beforeDatabase], before));
    }
    const rows: Row[] = [];
    for (const method of Object.keys(bodies) as Method[]) {
      for (const connections of [1, 10]) {
        const samples = new Map<string, { rps: number[]; p50: number[]; p99: number[] }>(
          targets.map((t) => [t.name, { rps: [], p50: [], p99: [] }]),
        );
        for (let round = 0; round < rounds; round++) {
          for (const t of targets) {
            const s = samples.get(t.name) as { rps: number[]; p50: number[]; p99: number[] };
            s.rps.push(await throughput(t.url, method, connections));
          }
          const measured = await latencies(
            targets.map((t) => t.url),
            method,
            connections,
            connections === 1 ? 2000 : 300,
          );
          targets.forEach((t, index) => {
            const s = samples.get(t.name) as { rps: number[]; p50: number[]; p99: number[] };
            s.p50.push(measured[index].p50);
            s.p99.push(measured[index].p99);
          });
        }
        for (const t of targets) {
          const s = samples.get(t.name) as { rps: number[]; p50: number[]; p99: number[] };
          const row = {
            target: t.name,
            method,
            connections,
            rps: median(s.rps),
            p50: median(s.p50),
            p99: median(s.p99),
          };
          rows.push(row);
          process.stdout.write(
            `  ${method} c=${connections} ${t.name}: ${Math.round(row.rps)} req/s, p50 ${row.p50.toFixed(3)} ms, p99 ${row.p99.toFixed(3)} ms\n`,
          );
        }
      }
    }
    report(rows);
    return rows;
  } finally {
    for (const t of targets) await t.stop();
    await postgres?.stop();
    await node.stop();
  }
}

function report(rows: Row[]) {
  const find = (target: string, method: Method, c: number) =>
    rows.find((r) => r.target === target && r.method === method && r.connections === c) as Row;
  console.log("\nProxy benchmark: ratios against the baselines run beside it");
  for (const method of Object.keys(bodies) as Method[]) {
    for (const c of [1, 10]) {
      const direct = find("anvil direct", method, c);
      const plain = find("plain node proxy", method, c);
      const fhp = find("@fastify/http-proxy", method, c);
      console.log(`\n${method}, ${c} connection${c > 1 ? "s" : ""}`);
      console.log("  target                  req/s   ×direct  ×plain  ×f-h-p   p50 ms  +p50 ms   p99 ms  +p99 ms");
      for (const r of rows.filter((x) => x.method === method && x.connections === c)) {
        console.log(
          `  ${r.target.padEnd(22)} ${String(Math.round(r.rps)).padStart(6)}   ${(r.rps / direct.rps).toFixed(2).padStart(6)}  ${(r.rps / plain.rps).toFixed(2).padStart(6)}  ${(r.rps / fhp.rps).toFixed(2).padStart(6)}  ${r.p50.toFixed(3).padStart(7)}  ${(r.p50 - direct.p50).toFixed(3).padStart(7)}  ${r.p99.toFixed(3).padStart(7)}  ${(r.p99 - direct.p99).toFixed(3).padStart(7)}`,
        );
      }
      // "all features" is the service's own stages on PostgreSQL (the stand-in's row is printed above for comparison).
      const full = find("ours, all features", method, c);
      const checks = [
        [`all features ≥ 0.9× plain proxy throughput`, full.rps / plain.rps >= 0.9],
        [`all features ≥ 1.5× @fastify/http-proxy throughput`, full.rps / fhp.rps >= 1.5],
        ...(c === 1 ? [[`all features adds ≤ 0.15 ms p50 over direct`, full.p50 - direct.p50 <= 0.15] as const] : []),
      ] as const;
      for (const [label, ok] of checks) console.log(`  target: ${label}: ${ok ? "met" : "NOT met"}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runProxyBench();
}
