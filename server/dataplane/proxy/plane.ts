import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import type { UpstreamMap } from "../chain/nodes.ts";
import { checkAccess, checkCall, clientIpOf, corsHeaders } from "./checks.ts";
import type { EndpointDirectory } from "./directory.ts";
import { type CompiledEndpoint, NO_HEADERS } from "./endpoint.ts";
import { errorObject, isCall, type JsonRpcCall, type Refusal, refusal } from "./jsonrpc.ts";
import { type MeterStage, noMeter, noRateLimit, type ProxyRequestInfo, type RateLimitStage } from "./stages.ts";
import { UpstreamClient } from "./upstream.ts";

export interface DataPlaneDeps {
  directory: EndpointDirectory;
  upstreams: UpstreamMap;
  rateLimit?: RateLimitStage;
  meter?: MeterStage;
  /** Told about failures inside the proxy (a stage that threw); the caller still gets an answer. */
  onError?: (error: unknown) => void;
  /** Largest accepted request body. */
  maxBodyBytes?: number;
}

/** How a request named its endpoint: by the key in /rpc/:exId[/:token], or by a domain mask host. */
export interface RouteTarget {
  exId?: string;
  host?: string;
  pathToken?: string;
}

const JSON_HEADERS = { "content-type": "application/json" };
type Refused = { index: number; refusal: Refusal };
const NONE_REFUSED: Refused[] = [];
const refusedOf = (perCall: (Refusal | undefined)[]): Refused[] =>
  perCall.flatMap((r, index) => (r ? [{ index, refusal: r }] : []));
const EMPTY = Buffer.alloc(0);

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

type Parsed = { batch: boolean; calls: unknown[] } | { error: Refusal };

function parseBody(body: Buffer | string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === "string" ? body : body.toString("utf8"));
  } catch {
    return { error: refusal("PARSE_ERROR") };
  }
  if (Array.isArray(value))
    return value.length === 0 ? { error: refusal("INVALID_REQUEST") } : { batch: true, calls: value };
  if (!isCall(value)) return { error: refusal("INVALID_REQUEST") };
  return { batch: false, calls: [value] };
}

/**
 * The JSON-RPC proxy: resolve endpoint → status → security → rate limit (stage) → forward → meter (stage).
 * Framework-free (node:http request/response and upgrade sockets); `registerDataPlane` mounts it in Fastify.
 */
export class DataPlane {
  readonly upstreamClient = new UpstreamClient();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 8 * 1024 * 1024 });
  private readonly rateLimit: RateLimitStage;
  private readonly meter: MeterStage;
  private readonly maxBody: number;

  constructor(private readonly deps: DataPlaneDeps) {
    this.rateLimit = deps.rateLimit ?? noRateLimit;
    this.meter = deps.meter ?? noMeter;
    this.maxBody = deps.maxBodyBytes ?? 5 * 1024 * 1024;
  }

  lookup(target: RouteTarget): CompiledEndpoint | undefined {
    if (target.exId !== undefined) return this.deps.directory.byExId(target.exId);
    if (target.host !== undefined) return this.deps.directory.byHost(target.host);
    return undefined;
  }

  private answer(res: ServerResponse, r: Refusal, headers: Record<string, string> = {}, id?: JsonRpcCall["id"]): void {
    const body = errorObject(id, r);
    res.writeHead(r.http, { ...JSON_HEADERS, ...headers, "content-length": Buffer.byteLength(body) });
    res.end(body);
  }

  /** The lookup, plus the directory's one-time store lookup for a key it does not hold. */
  private async lookupOrLoad(target: RouteTarget): Promise<CompiledEndpoint | undefined> {
    const found = this.lookup(target);
    if (found || target.exId === undefined || !this.deps.directory.resolveMiss) return found;
    return this.deps.directory.resolveMiss(target.exId);
  }

  /** Serves one HTTP request; never rejects (a failure inside a stage answers 500 and is reported). */
  handleHttp(req: IncomingMessage, res: ServerResponse, target: RouteTarget): Promise<void> {
    return this.serveHttp(req, res, target).catch((error) => {
      this.deps.onError?.(error);
      if (!res.headersSent) this.answer(res, refusal("INTERNAL"));
      else res.destroy();
    });
  }

  private async serveHttp(req: IncomingMessage, res: ServerResponse, target: RouteTarget): Promise<void> {
    const startedAt = performance.now();
    const endpoint = this.lookup(target) ?? (await this.lookupOrLoad(target));
    if (!endpoint) {
      req.resume();
      return this.answer(res, refusal("NOT_FOUND"));
    }
    const record = endpoint.record;
    const headers: Record<string, string> = record.options.cors
      ? { ...endpoint.extraHeaders, ...corsHeaders(req) }
      : endpoint.extraHeaders;
    const clientIp = clientIpOf(endpoint, req);
    const info: ProxyRequestInfo = { endpoint, transport: "http", clientIp, methods: [] };
    const finish = (
      httpStatus: number,
      responseBytes: number | null,
      requestRefusal: Refusal | null,
      refused: Refused[] = [],
    ) => this.record(info, startedAt, httpStatus, responseBytes, requestRefusal, refused);

    if (record.status !== "ACTIVE") {
      req.resume();
      const r = refusal(record.status in statusKinds ? (record.status as keyof typeof statusKinds) : "DISABLED");
      this.answer(res, r, headers);
      return finish(r.http, null, r);
    }
    if (req.method === "OPTIONS") {
      req.resume();
      res.writeHead(204, { ...headers, allow: "POST, OPTIONS" });
      res.end();
      return;
    }
    if (req.method !== "POST") {
      req.resume();
      return this.answer(res, refusal("METHOD_NOT_ALLOWED"), { ...headers, allow: "POST, OPTIONS" });
    }
    let denied = checkAccess(endpoint, req.headers, clientIp, target.pathToken);
    if (denied instanceof Promise) denied = await denied;
    if (denied) {
      req.resume();
      this.answer(res, denied, headers);
      return finish(denied.http, null, denied);
    }
    let body: Buffer;
    try {
      body = await readBody(req, this.maxBody);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        return this.answer(
          res,
          { kind: "TOO_LARGE", http: 413, code: -32600, message: `The body is larger than ${this.maxBody} bytes.` },
          headers,
        );
      }
      res.destroy();
      return;
    }
    const parsed = parseBody(body);
    if ("error" in parsed) {
      this.answer(res, parsed.error, headers);
      return finish(parsed.error.http, null, parsed.error);
    }
    const calls = parsed.calls;
    const perCall: (Refusal | undefined)[] = new Array(calls.length);
    let refusedCount = 0;
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i];
      const ok = isCall(c);
      info.methods.push(ok ? c.method : "");
      const r = ok ? checkCall(endpoint, c) : refusal("INVALID_REQUEST");
      perCall[i] = r;
      if (r) refusedCount++;
    }
    let admitted = this.rateLimit.admit(info);
    if (admitted instanceof Promise) admitted = await admitted;
    if (admitted) {
      if ("refuse" in admitted) {
        this.answer(res, admitted.refuse, headers);
        return finish(admitted.refuse.http, null, admitted.refuse);
      }
      admitted.perCall.forEach((r, i) => {
        if (r && !perCall[i]) {
          perCall[i] = r;
          refusedCount++;
        }
      });
    }
    const refused: Refused[] = refusedCount === 0 ? NONE_REFUSED : refusedOf(perCall);
    const upstream = this.deps.upstreams.get(record.network);
    if (!upstream && refused.length < calls.length) {
      const r = refusal("NO_UPSTREAM", `No upstream node is configured for the network ${record.network}.`, {
        network: record.network,
      });
      this.answer(res, r, headers);
      return finish(r.http, null, r, refused);
    }
    let status = 200;
    let out: Buffer | string;
    try {
      if (refused.length === 0 && upstream) {
        // The common case: forward the client's bytes untouched.
        const answer = await this.upstreamClient.post(upstream, body);
        status = answer.status;
        out = answer.body;
      } else if (!parsed.batch) {
        out = errorObject((calls[0] as JsonRpcCall).id, refused[0].refusal);
      } else {
        out = await this.forwardPartialBatch(upstream, calls, perCall);
      }
    } catch {
      const r = refusal("UPSTREAM_FAILED", undefined, { network: record.network });
      this.answer(res, r, headers);
      return finish(r.http, null, r, refused);
    }
    const length = typeof out === "string" ? Buffer.byteLength(out) : out.length;
    res.writeHead(
      status,
      headers === NO_HEADERS
        ? { "content-type": "application/json", "content-length": length }
        : { ...JSON_HEADERS, ...headers, "content-length": length },
    );
    res.end(out);
    finish(status, length, null, refused);
  }

  /** Hands a finished request to the meter stage (nothing to build when no meter is attached). */
  private record(
    info: ProxyRequestInfo,
    startedAt: number,
    httpStatus: number,
    responseBytes: number | null,
    requestRefusal: Refusal | null,
    refused: Refused[],
  ): void {
    if (this.meter === noMeter) return;
    this.meter.record({
      endpoint: info.endpoint,
      transport: info.transport,
      clientIp: info.clientIp,
      methods: info.methods,
      startedAt,
      durationMs: performance.now() - startedAt,
      httpStatus,
      responseBytes,
      refused,
      requestRefusal,
    });
  }

  /** A batch where some calls were refused: forward the rest, answer in the original order. */
  private async forwardPartialBatch(
    upstream: ReturnType<UpstreamMap["get"]>,
    calls: unknown[],
    perCall: (Refusal | undefined)[],
  ): Promise<string> {
    const allowed = calls.filter((_, i) => !perCall[i]);
    const answers = new Map<string, unknown>();
    let inOrder: unknown[] = [];
    if (allowed.length > 0 && upstream) {
      const answer = await this.upstreamClient.post(upstream, JSON.stringify(allowed));
      const parsedAnswer = JSON.parse(answer.body.toString("utf8")) as unknown;
      inOrder = Array.isArray(parsedAnswer) ? parsedAnswer : [parsedAnswer];
      for (const a of inOrder) {
        if (a && typeof a === "object" && "id" in a) answers.set(JSON.stringify((a as { id: unknown }).id), a);
      }
    }
    const parts: string[] = [];
    let next = 0;
    calls.forEach((call, i) => {
      const id = isCall(call) ? call.id : null;
      const r = perCall[i];
      if (r) {
        if (!isCall(call) || call.id !== undefined) parts.push(errorObject(id, r));
        return;
      }
      if (isCall(call) && call.id === undefined) return;
      const found = answers.get(JSON.stringify(id)) ?? inOrder[next];
      next++;
      if (found !== undefined) parts.push(JSON.stringify(found));
    });
    return `[${parts.join(",")}]`;
  }

  /** Handles an HTTP upgrade for a WebSocket client: checks as for HTTP, then bridges to the upstream. */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: RouteTarget): Promise<void> {
    const reject = (r: Refusal) => {
      const body = errorObject(null, r);
      socket.end(
        `HTTP/1.1 ${r.http} ${r.kind}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    const endpoint = await this.lookupOrLoad(target);
    if (!endpoint) return reject(refusal("NOT_FOUND"));
    const record = endpoint.record;
    if (record.status !== "ACTIVE")
      return reject(refusal(record.status in statusKinds ? (record.status as keyof typeof statusKinds) : "DISABLED"));
    const clientIp = clientIpOf(endpoint, req);
    const denied = await checkAccess(endpoint, req.headers, clientIp, target.pathToken);
    if (denied) return reject(denied);
    const wsUrl = this.deps.upstreams.get(record.network)?.wsUrl;
    if (!wsUrl) {
      return reject(
        refusal("NO_UPSTREAM", `No upstream WebSocket is configured for the network ${record.network}.`, {
          network: record.network,
        }),
      );
    }
    this.wss.handleUpgrade(req, socket, head ?? EMPTY, (client) =>
      this.bridge(client, endpoint, req, target, clientIp, wsUrl),
    );
  }

  private bridge(
    client: WebSocket,
    first: CompiledEndpoint,
    req: IncomingMessage,
    target: RouteTarget,
    clientIp: string,
    wsUrl: string,
  ): void {
    const upstream = new WebSocket(wsUrl, { perMessageDeflate: false });
    const pending: (string | Buffer)[] = [];
    let checked = first;
    const closeBoth = (code: number, reason: string) => {
      if (client.readyState === WebSocket.OPEN) client.close(code, reason.slice(0, 120));
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    };
    upstream.on("open", () => {
      for (const m of pending) upstream.send(m);
      pending.length = 0;
    });
    upstream.on("message", (data: RawData, isBinary: boolean) => {
      if (client.readyState === WebSocket.OPEN) client.send(data as Buffer, { binary: isBinary });
    });
    upstream.on("close", () => closeBoth(1011, "The upstream node closed the connection."));
    upstream.on("error", () => closeBoth(1011, "The upstream node did not answer."));
    client.on("close", () => {
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.close();
    });
    client.on("error", () => upstream.terminate());

    const send = (text: string | Buffer) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
      else pending.push(text);
    };

    const onMessage = async (data: RawData) => {
      const startedAt = performance.now();
      // The endpoint may have changed since the connection opened (status, a revoked token, a new rule):
      // a new compiled entry means the checks run again, so revocation applies to open connections.
      const current = this.lookup(target);
      if (!current) return closeBoth(1008, "This endpoint no longer exists.");
      if (current !== checked) {
        if (current.record.status !== "ACTIVE") {
          const r = refusal(
            current.record.status in statusKinds ? (current.record.status as keyof typeof statusKinds) : "DISABLED",
          );
          return closeBoth(1008, r.message);
        }
        const denied = await checkAccess(current, req.headers, clientIp, target.pathToken);
        if (denied) return closeBoth(1008, denied.message);
        checked = current;
      }
      const raw = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      const parsed = parseBody(raw);
      const info: ProxyRequestInfo = { endpoint: current, transport: "ws", clientIp, methods: [] };
      if ("error" in parsed) {
        client.send(errorObject(null, parsed.error));
        return;
      }
      info.methods = parsed.calls.map((c) => (isCall(c) ? c.method : ""));
      const perCall = parsed.calls.map((c) => (isCall(c) ? checkCall(current, c) : refusal("INVALID_REQUEST")));
      const admitted = await this.rateLimit.admit(info);
      let requestRefusal: Refusal | null = null;
      if (admitted) {
        if ("refuse" in admitted) requestRefusal = admitted.refuse;
        else
          admitted.perCall.forEach((r, i) => {
            if (r && !perCall[i]) perCall[i] = r;
          });
      }
      const refused = perCall.flatMap((r, index) => (r ? [{ index, refusal: r }] : []));
      if (requestRefusal) {
        const whole = requestRefusal;
        const parts = parsed.calls.map((c) => errorObject(isCall(c) ? c.id : null, whole));
        client.send(parsed.batch ? `[${parts.join(",")}]` : parts[0]);
      } else if (refused.length === 0) {
        send(raw.toString("utf8"));
      } else {
        // A WebSocket batch answer cannot be merged with the upstream's without holding it back, so a
        // batch with any refused call is answered whole: each call with its own reason.
        const parts = parsed.calls.map((c, i) =>
          errorObject(
            isCall(c) ? c.id : null,
            perCall[i] ?? {
              kind: "BATCH_REFUSED",
              http: 200,
              code: -32008,
              message: "Not sent: another call in this batch was refused.",
            },
          ),
        );
        client.send(parsed.batch ? `[${parts.join(",")}]` : parts[0]);
      }
      this.meter.record({
        ...info,
        startedAt,
        durationMs: performance.now() - startedAt,
        httpStatus: requestRefusal?.http ?? 200,
        responseBytes: null,
        refused,
        requestRefusal,
      });
    };
    client.on("message", (data: RawData) => {
      onMessage(data).catch((error) => {
        this.deps.onError?.(error);
        closeBoth(1011, refusal("INTERNAL").message);
      });
    });
  }

  /** Ends every WebSocket client (and so its upstream connection). */
  closeConnections(): void {
    for (const c of this.wss.clients) c.terminate();
  }

  async close(): Promise<void> {
    this.closeConnections();
    this.wss.close();
    await this.upstreamClient.close();
  }
}

const statusKinds = {
  PAUSED: true,
  ARCHIVED: true,
  DISABLED: true,
  SUSPENDED: true,
  LIMIT_REACHED: true,
  CANCELED: true,
  TERMINATED: true,
} as const;
