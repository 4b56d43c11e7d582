/**
 * One server of the proxy benchmark, started as its own process by tests/bench/proxy.ts:
 *   node --import tsx tests/bench/proxy-servers.ts <plain|fastify-http-proxy|ours|ours-full|ours-real> <upstream http url> [database url]
 * Prints `listening <port> <path>` when ready. `ours-full` runs stand-in stages (an in-memory limiter and
 * counter); `ours-real` runs the service's own stages (createRpcStages) on the given PostgreSQL database,
 * seeded here with an account, an endpoint and a rate limiter far above the load.
 */
import { createServer } from "node:http";
import { sql } from "drizzle-orm";
import Fastify from "fastify";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { Pool } from "undici";
import { staticUpstreams } from "../../server/dataplane/chain/nodes.ts";
import { createRpcStages } from "../../server/dataplane/metering/stages.ts";
import { EndpointCache } from "../../server/dataplane/proxy/directory.ts";
import { defaultSecurityOptions, hashToken } from "../../server/dataplane/proxy/endpoint.ts";
import { registerDataPlane } from "../../server/dataplane/proxy/register.ts";
import type { MeterStage, RateLimitStage } from "../../server/dataplane/proxy/stages.ts";
import { seedPlans, signUp } from "../../server/domains/account/service.ts";
import { subscriptions } from "../../server/domains/account/tables.ts";
import { createEndpoint } from "../../server/domains/endpoints/service.ts";
import { databaseLimitSource } from "../../server/domains/ratelimits/limit-source.ts";
import { createRateLimiter } from "../../server/domains/ratelimits/service.ts";
import { CreditTable } from "../../server/domains/usage/credits.ts";
import { databaseMeterSink } from "../../server/domains/usage/meter-sink.ts";
import { openDatabase, runMigrations } from "../../server/platform/db/index.ts";
import { DomainEvents } from "../../server/platform/events.ts";

export const BENCH_TOKEN = "bench0123456789abcdef0123456789abcdef0123456789";

const [kind, upstream, databaseUrl] = process.argv.slice(2);
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
} else if (kind === "ours-real") {
  if (!databaseUrl) throw new Error("ours-real needs a database url");
  const db = openDatabase(databaseUrl, 8);
  await runMigrations(db);
  await seedPlans(db);
  const events = new DomainEvents();
  const { accountId, userId } = await signUp(db, { email: "bench@example.com", password: "bench-password-1" });
  // A plan far above the load, so neither the plan's RPS nor the monthly limit is what is measured.
  await db.update(subscriptions).set({ requestsPerSecond: 1_000_000_000, responsesPerMonth: 1e15 });
  const endpoint = await createEndpoint(db, events, [], accountId, { chain: "ethereum", network: "ethereum-sepolia" });
  const endpointId = endpoint.endpoint.id;
  await createRateLimiter(
    db,
    events,
    { accountId, userId, role: "OWNER" },
    { endpointId, interval: "SECOND", rate: 100_000_000, methods: ["*"], reason: "bench", limitByIP: true },
  );
  const stages = await createRpcStages({
    limits: databaseLimitSource(db),
    meter: { sink: databaseMeterSink(db, events), pricing: new CreditTable() },
    events,
    config: { redisUrl: null },
  });
  const directory = new EndpointCache();
  directory.put({
    id: endpointId,
    exId: "bench",
    accountId,
    network: "ethereum-sepolia",
    chainId: 11155111,
    status: "ACTIVE",
    options: { ...defaultSecurityOptions(), tokens: true, ips: true },
    ipCustomHeaderName: null,
    tokenHashes: [hashToken(BENCH_TOKEN)],
    jwts: [],
    referrers: [],
    ips: ["10.0.0.0/8", "192.168.0.0/16", "127.0.0.1"],
    domainMasks: [],
    requestFilterMethods: [],
    disabledMethods: [],
  });
  const app = Fastify();
  registerDataPlane(app, {
    directory,
    upstreams: staticUpstreams([
      { network: "ethereum-sepolia", chainId: 11155111, httpUrl: upstream, wsUrl: null, source: "local" },
    ]),
    rateLimit: stages.rateLimit,
    meter: stages.meter,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      // Flush what was counted, and say how much, so the run shows the meter really wrote.
      void stages
        .close()
        .then(() => db.execute<{ n: string }>(sql`select coalesce(sum(requests), 0) as n from usage_minutes`))
        .then((r) => process.stderr.write(`  (ours-real metered ${r.rows[0].n} calls into usage_minutes)\n`))
        .finally(() => process.exit(0));
    });
  listening((app.server.address() as { port: number }).port, `/rpc/bench/${BENCH_TOKEN}`);
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
if (kind !== "ours-real")
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0));
