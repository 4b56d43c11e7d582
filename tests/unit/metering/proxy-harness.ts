/**
 * The real proxy with the real rate-limit and meter stages on a test database, in front of a real anvil:
 * what `buildApp` will run once the proxy is wired in, started beside a test app for API tests.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { type AnvilNode, startAnvil } from "../../../server/dataplane/chain/anvil.ts";
import { staticUpstreams } from "../../../server/dataplane/chain/nodes.ts";
import { createRpcStages, type RpcStages } from "../../../server/dataplane/metering/stages.ts";
import { EndpointCache } from "../../../server/dataplane/proxy/directory.ts";
import { defaultSecurityOptions, type EndpointRecord } from "../../../server/dataplane/proxy/endpoint.ts";
import { registerDataPlane } from "../../../server/dataplane/proxy/register.ts";
import { databaseLimitSource } from "../../../server/domains/ratelimits/limit-source.ts";
import { CreditTable } from "../../../server/domains/usage/credits.ts";
import { databaseMeterSink } from "../../../server/domains/usage/meter-sink.ts";
import { type Db, openDatabase } from "../../../server/platform/db/index.ts";
import { DomainEvents } from "../../../server/platform/events.ts";

export const SEPOLIA = 11155111;

export interface ProxyHarness {
  url: string;
  /** The chain node the proxy forwards to. */
  upstreamUrl: string;
  db: Db;
  events: DomainEvents;
  stages: RpcStages;
  directory: EndpointCache;
  /** Puts a service endpoint (as GraphQL returned it) into the proxy's directory. */
  put(
    endpoint: { id: string; exId: string; network: string; status?: string },
    accountId: string,
    extra?: Partial<EndpointRecord>,
  ): void;
  /** POSTs a JSON-RPC body to /rpc/<exId>[/<token>]. */
  rpc(
    exId: string,
    body: unknown,
    options?: { token?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export async function startProxyHarness(
  databaseUrl: string,
  options: { redisUrl?: string; upstreamUrl?: string } = {},
): Promise<ProxyHarness> {
  const node: AnvilNode | null = options.upstreamUrl
    ? null
    : await startAnvil({ chainId: SEPOLIA, blockTimeSeconds: 1 });
  const db = openDatabase(databaseUrl, 4);
  const events = new DomainEvents();
  const stages = await createRpcStages({
    limits: databaseLimitSource(db),
    events,
    config: { redisUrl: options.redisUrl ?? null },
    meter: {
      sink: databaseMeterSink(db, events),
      pricing: new CreditTable(),
      // Tests flush by hand; the timers stay out of the way.
      flushMs: 3_600_000,
      housekeepingMs: 3_600_000,
      totalsRefreshMs: 0,
    },
    rateLimitRefreshMs: 0,
  });
  const directory = new EndpointCache();
  const app: FastifyInstance = Fastify();
  const httpUrl = options.upstreamUrl ?? (node as AnvilNode).httpUrl;
  registerDataPlane(app, {
    directory,
    upstreams: staticUpstreams([
      {
        network: "ethereum-sepolia",
        chainId: SEPOLIA,
        httpUrl,
        wsUrl: httpUrl.replace(/^http/, "ws"),
        source: "local",
      },
    ]),
    rateLimit: stages.rateLimit,
    meter: stages.meter,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    url,
    upstreamUrl: httpUrl,
    db,
    events,
    stages,
    directory,
    put(endpoint, accountId, extra = {}) {
      const record: EndpointRecord = {
        id: endpoint.id,
        exId: endpoint.exId,
        accountId,
        network: endpoint.network,
        chainId: SEPOLIA,
        status: endpoint.status ?? "ACTIVE",
        options: defaultSecurityOptions(),
        ipCustomHeaderName: null,
        tokenHashes: [],
        jwts: [],
        referrers: [],
        ips: [],
        domainMasks: [],
        requestFilterMethods: [],
        disabledMethods: [],
        ...extra,
      };
      directory.put(record);
    },
    async rpc(exId, body, rpcOptions = {}) {
      const path = rpcOptions.token ? `/rpc/${exId}/${rpcOptions.token}` : `/rpc/${exId}`;
      const response = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...rpcOptions.headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: returned as text
      }
      return { status: response.status, body: parsed };
    },
    async close() {
      await app.close();
      await stages.close();
      await db.$client.end();
      await node?.stop();
    },
  };
}

export const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
