import { request as httpRequest } from "node:http";
import Fastify, { type FastifyInstance } from "fastify";
import { WebSocket } from "ws";
import { type AnvilNode, startAnvil } from "../../../server/dataplane/chain/anvil.ts";
import { staticUpstreams, type Upstream } from "../../../server/dataplane/chain/nodes.ts";
import { EndpointCache } from "../../../server/dataplane/proxy/directory.ts";
import { defaultSecurityOptions, type EndpointRecord } from "../../../server/dataplane/proxy/endpoint.ts";
import type { DataPlane } from "../../../server/dataplane/proxy/plane.ts";
import { registerDataPlane } from "../../../server/dataplane/proxy/register.ts";
import type { MeterEvent, MeterStage, RateLimitStage } from "../../../server/dataplane/proxy/stages.ts";

export const SEPOLIA = 11155111;

/** A real anvil and the real proxy in a Fastify app, with endpoints put straight into the directory's cache. */
export interface Harness {
  node: AnvilNode;
  app: FastifyInstance;
  plane: DataPlane;
  directory: EndpointCache;
  url: string;
  port: number;
  meterEvents: MeterEvent[];
  put(partial: Partial<EndpointRecord> & { exId: string }): EndpointRecord;
  close(): Promise<void>;
}

export async function startHarness(
  options: {
    rateLimit?: RateLimitStage;
    withMeter?: boolean;
    /** A meter of the test's own instead of the recording one. */
    meter?: MeterStage;
    onError?: (error: unknown) => void;
    maxBodyBytes?: number;
    maxBatchCalls?: number;
    maxWebSocketsPerAccount?: number;
    trustsProxy?: (address: string) => boolean;
  } = {},
): Promise<Harness> {
  const node = await startAnvil({ chainId: SEPOLIA, blockTimeSeconds: 1 });
  const directory = new EndpointCache();
  const upstreams: Upstream[] = [
    { network: "ethereum-sepolia", chainId: SEPOLIA, httpUrl: node.httpUrl, wsUrl: node.wsUrl, source: "local" },
  ];
  const meterEvents: MeterEvent[] = [];
  const meter: MeterStage | undefined =
    options.meter ?? (options.withMeter ? { record: (e) => meterEvents.push(e) } : undefined);
  const app = Fastify();
  app.get("/", async () => "the console");
  const plane = registerDataPlane(app, {
    directory,
    upstreams: staticUpstreams(upstreams),
    rateLimit: options.rateLimit,
    meter,
    onError: options.onError,
    maxBodyBytes: options.maxBodyBytes,
    maxBatchCalls: options.maxBatchCalls,
    maxWebSocketsPerAccount: options.maxWebSocketsPerAccount,
    trustsProxy: options.trustsProxy,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  let n = 0;
  return {
    node,
    app,
    plane,
    directory,
    port,
    url: `http://127.0.0.1:${port}`,
    meterEvents,
    put(partial) {
      n++;
      const record: EndpointRecord = {
        id: `endpoint-${n}-${partial.exId}`,
        accountId: "account-1",
        network: "ethereum-sepolia",
        chainId: SEPOLIA,
        status: "ACTIVE",
        options: defaultSecurityOptions(),
        ipCustomHeaderName: null,
        tokenHashes: [],
        jwts: [],
        referrers: [],
        ips: [],
        domainMasks: [],
        requestFilterMethods: [],
        disabledMethods: [],
        ...partial,
      };
      directory.put(record);
      return record;
    },
    async close() {
      await app.close();
      await node.stop();
    },
  };
}

export interface RpcAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  text: string;
}

/** A raw HTTP request (node:http, so the Host header can be set for domain masks). */
export function rpc(
  port: number,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = "POST",
): Promise<RpcAnswer> {
  const payload = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path, method, headers: { "content-type": "application/json", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
        });
      },
    );
    req.on("error", reject);
    req.end(method === "POST" ? payload : undefined);
  });
}

export const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

export type WsOutcome =
  | { opened: true; answer: unknown; ws: WebSocket }
  | { opened: false; status: number; body: string; retryAfter?: string };

/** Opens a WebSocket to the proxy and sends one message; reports the upgrade refusal when there is one. */
export function wsCall(
  port: number,
  path: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<WsOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    ws.on("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          opened: false,
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          retryAfter: res.headers["retry-after"] as string | undefined,
        }),
      );
    });
    ws.on("open", () => ws.send(JSON.stringify(message)));
    ws.once("message", (data) => resolve({ opened: true, answer: JSON.parse(data.toString()), ws }));
    ws.on("error", (error) => reject(error));
  });
}
