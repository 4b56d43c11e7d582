/**
 * One server of the proxy benchmark, started as its own process by tests/bench/proxy.ts:
 *   node --import tsx tests/bench/proxy-servers.ts <plain|fastify-http-proxy|ours|ours-full> <upstream http url>
 * Prints `listening <port> <path>` when ready.
 */
import { createServer } from "node:http";
import Fastify from "fastify";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { Pool } from "undici";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { EndpointCache } from "../../server/dataplane/proxy/directory.ts";
import { defaultSecurityOptions, hashToken } from "../../server/dataplane/proxy/endpoint.ts";
import { registerDataPlane } from "../../server/dataplane/proxy/register.ts";
import type { MeterStage, RateLimitStage } from "../../server/dataplane/proxy/stages.ts";

export const BENCH_TOKEN = "bench0123456789abcdef0123456789abcdef0123456789";

const [kind, upstream] = process.argv.slice(2);
if (!kind || !upstream) throw new Error("usage: proxy-servers.ts <kind> <upstream>");

function listening(port: number, path: string) {
  process.stdout.write(`listening ${port} ${path}\n`);
}

if (kind === "plain") {
  // The featureless baseline: node:http in, an undici pool out, nothing else.
  const pool = new Pool(upstream, { connections: 128 });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      try {
        const r = await pool.request({
          method: "POST",
          path: "/",
          headers: { "content-type": "application/json" },
          body: Buffer.concat(chunks),
        });
        const body = Buffer.from(await r.body.arrayBuffer());
        res.writeHead(r.statusCode, { "content-type": "application/json", "content-length": body.length });
        res.end(body);
      } catch {
        res.writeHead(502);
        res.end();
      }
    });
  });
  server.listen(0, "127.0.0.1", () => listening((server.address() as { port: number }).port, "/"));
} else if (kind === "fastify-http-proxy") {
  const { default: proxy } = await import("@fastify/http-proxy");
  const app = Fastify();
  await app.register(proxy, { upstream, prefix: "/" });
  await app.listen({ port: 0, host: "127.0.0.1" });
  listening((app.server.address() as { port: number }).port, "/");
} else if (kind === "ours" || kind === "ours-full") {
  const full = kind === "ours-full";
  const directory = new EndpointCache();
  directory.put({
    id: "bench",
    exId: "bench",
    accountId: "bench-account",
    network: "ethereum-sepolia",
    chainId: 11155111,
    status: "ACTIVE",
    options: { ...defaultSecurityOptions(), tokens: full, ips: full },
    ipCustomHeaderName: null,
    tokenHashes: full ? [hashToken(BENCH_TOKEN)] : [],
    jwts: [],
    referrers: [],
    ips: full ? ["10.0.0.0/8", "192.168.0.0/16", "127.0.0.1"] : [],
    domainMasks: [],
    requestFilterMethods: [],
    disabledMethods: [],
  });
  let rateLimit: RateLimitStage | undefined;
  let meter: MeterStage | undefined;
  if (full) {
    // A real limiter (rate-limiter-flexible, in memory) far above the load, per endpoint and client IP;
    // and a meter that aggregates per endpoint and method in memory, as a metering stage would before flushing.
    const limiter = new RateLimiterMemory({ points: 1_000_000_000, duration: 1 });
    rateLimit = {
      admit: async (req) => {
        try {
          await limiter.consume(`${req.endpoint.record.id}:${req.clientIp}`, req.methods.length);
          return undefined;
        } catch {
          return { refuse: { kind: "RATE_LIMITED", http: 429, code: -32029, message: "Rate limited." } };
        }
      },
    };
    const counts = new Map<string, number>();
    meter = {
      record: (e) => {
        for (const m of e.methods) {
          const key = `${e.endpoint.record.id}:${m}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
      },
    };
  }
  const app = Fastify();
  registerDataPlane(app, {
    directory,
    upstreams: staticUpstreams([
      { network: "ethereum-sepolia", chainId: 11155111, httpUrl: upstream, wsUrl: null, source: "local" },
    ]),
    rateLimit,
    meter,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  listening((app.server.address() as { port: number }).port, full ? `/rpc/bench/${BENCH_TOKEN}` : "/rpc/bench");
} else {
  throw new Error(`unknown server kind ${kind}`);
}

// Exit normally on a signal, so `node --cpu-prof` can write its profile when profiling a server.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0));
