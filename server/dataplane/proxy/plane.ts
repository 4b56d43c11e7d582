import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import type { Upstream, UpstreamMap } from "../chain/nodes.ts";
import { PostClient } from "../http/post-client.ts";
import { SUBSCRIPTION_METHOD } from "../metering/counting-rule.ts";
import {
  type AllowanceEnd,
  admitCalls,
  refusalHeaders,
  refusedCallsAnswer,
  refusedOf,
  statusRefusal,
  tooManyWebSockets,
} from "./admission.ts";
import { archiveWay, stateBlockOf, stateNotKept } from "./archive-calls.ts";
import { checkAccess, clientIpOf, corsHeaders } from "./checks.ts";
import type { EndpointDirectory } from "./directory.ts";
import { type CompiledEndpoint, NO_HEADERS } from "./endpoint.ts";
import { batchTooLarge, errorObject, isCall, type JsonRpcCall, type Refusal, refusal } from "./jsonrpc.ts";
import { RequestRecord } from "./request-record.ts";
import { type ServedMethods, serveCall } from "./served-methods.ts";
import { type MeterStage, noMeter, noRateLimit, type RateLimitStage } from "./stages.ts";

/**
 * What the proxy reads of an HTTP request: node's IncomingMessage, or a request the fast lane read off the
 * socket itself (fastlane.ts), which comes with its whole body.
 */
export interface RpcRequest {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string };
  /** The whole body, already read (the fast lane); otherwise it is read from the stream. */
  body?: Buffer;
  resume(): unknown;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  destroy(): unknown;
}

/** What the proxy does with an HTTP answer: node's ServerResponse, or the fast lane's. */
export interface RpcResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body?: string | Buffer): unknown;
  destroy(): unknown;
}

export interface DataPlaneDeps {
  directory: EndpointDirectory;
  upstreams: UpstreamMap;
  rateLimit?: RateLimitStage;
  meter?: MeterStage;
  /** Told about failures inside the proxy (a stage that threw); the caller still gets an answer. */
  onError?: (error: unknown) => void;
  /** Largest accepted request body. */
  maxBodyBytes?: number;
  /** Most calls accepted in one batch (HTTP body or WebSocket message); Geth's default, 1000, when absent. */
  maxBatchCalls?: number;
  /** Most WebSocket connections an account may have open in this process; DEFAULT_MAX_WEBSOCKETS_PER_ACCOUNT when absent. */
  maxWebSocketsPerAccount?: number;
  /** The operator's proxies that may name the client in X-Forwarded-For (trustedProxies); none when absent. */
  trustsProxy?: (address: string) => boolean;
  /** Methods the service answers itself, never forwarded (served-methods.ts); none when absent. */
  served?: ServedMethods;
}

/** How a request named its endpoint: by the key in /rpc/:exId[/:token], or by a domain mask host. */
export interface RouteTarget {
  exId?: string;
  host?: string;
  pathToken?: string;
}

const JSON_HEADERS = { "content-type": "application/json" };
/** Geth's BatchRequestLimit default: the most calls one batch may hold. */
export const DEFAULT_MAX_BATCH_CALLS = 1000;
/**
 * Each WebSocket client holds a connection to the shared chain node besides its own, and upgrades pass no
 * rate limit: without a bound one token could open connections until this process or the node ran out.
 */
export const DEFAULT_MAX_WEBSOCKETS_PER_ACCOUNT = 100;
const EMPTY = Buffer.alloc(0);
const BATCH_REFUSED: Refusal = {
  kind: "BATCH_REFUSED",
  http: 200,
  code: -32008,
  message: "Not sent: another call in this batch was refused.",
};

class BodyTooLarge extends Error {}

function readBody(req: RpcRequest, limit: number): Promise<Buffer> {
  if (req.body) return req.body.length > limit ? Promise.reject(new BodyTooLarge()) : Promise.resolve(req.body);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Not destroyed here, which would lose the answer: the 413 goes out with Connection: close, and
        // the connection ends after it. What else arrives meanwhile is dropped.
        chunks.length = 0;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

type Parsed = { batch: boolean; calls: unknown[] } | { error: Refusal };

// Request ids: a random per-process prefix and a counter (unique across processes, no randomness per request).
const ID_PREFIX = randomBytes(5).toString("hex");
let idCounter = 0;
const newRequestId = () => `${ID_PREFIX}-${(++idCounter).toString(36)}`;
/** A client's own x-request-id is used when it is short and plain (it is echoed back and stored in logs). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

function requestIdOf(req: RpcRequest): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && SANE_REQUEST_ID.test(given) ? given : newRequestId();
}

/**
 * The URL as logged: a domain-mask request by its host, with the path token masked; /rpc paths are
 * masked by the meter (maskUrl). Query strings are dropped there too.
 */
function loggedUrl(req: RpcRequest, target: RouteTarget): string {
  if (target.host === undefined) return req.url ?? "/";
  return `${target.host}${target.pathToken ? "/****" : "/"}`;
}

/** The Origin header, or the Referer when there is none: what the error logs show as the request's origin. */
const originHeaderOf = (headers: IncomingHttpHeaders): string | undefined => headers.origin ?? headers.referer;

const methodsOf = (calls: unknown[]): string[] => calls.map((c) => (isCall(c) ? c.method : ""));

/**
 * The most of a refused body parsed for the logs: what an error-log row keeps of a body. Anyone can send a
 * refused request (no token needed), and parsing megabytes of JSON (a nested one above all: about a second
 * for 4 MB of brackets) would hold this thread for every other request.
 */
const REFUSED_BODY_PARSED_BYTES = 16 * 1024;

/** The methods and calls of a body the proxy refused before reading it, when it parses (for the logs only). */
function callsOf(body: Buffer): { methods: string[]; calls: unknown[] } | undefined {
  if (body.length === 0 || body.length > REFUSED_BODY_PARSED_BYTES) return undefined;
  const parsed = parseBody(body);
  if ("error" in parsed) return undefined;
  return { methods: methodsOf(parsed.calls), calls: parsed.calls };
}

/**
 * The key of a WebSocket reply, matching `replyKeyOfCall`: a single answer's id read from its first bytes
 * (nodes write `{"jsonrpc":"2.0","id":…` first), so large answers are not parsed; anything else is parsed.
 * Returns null for a subscription notification, undefined when the reply names no id.
 */
const ID_PREFIX_RE = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"[^"\\]*"|null)\s*[,}]/;
const NOTIFICATION_RE = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"method"\s*:/;

function replyKeys(data: Buffer): string[] | null | undefined {
  const head = data.toString("utf8", 0, Math.min(data.length, 160));
  const m = ID_PREFIX_RE.exec(head);
  if (m) return [m[1]];
  if (NOTIFICATION_RE.test(head)) return null;
  let value: unknown;
  try {
    value = JSON.parse(data.toString("utf8"));
  } catch {
    return undefined;
  }
  if (Array.isArray(value))
    return value.flatMap((a) => (a && typeof a === "object" && "id" in a ? [`b:${JSON.stringify(a.id)}`] : []));
  if (value && typeof value === "object") {
    if ("id" in value) return [JSON.stringify(value.id)];
    if ("method" in value) return null;
  }
  return undefined;
}

/** The key a WebSocket message's reply will carry: a single call's id, or a batch's first id (prefixed b:). */
function replyKeyOfCall(batch: boolean, calls: unknown[]): string | undefined {
  for (const c of calls) {
    if (isCall(c) && c.id !== undefined) return batch ? `b:${JSON.stringify(c.id)}` : JSON.stringify(c.id);
  }
  return undefined;
}

/** Replies a WebSocket connection waits for, for metering; beyond this, messages are metered unanswered. */
const MAX_PENDING_REPLIES = 1024;

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
  readonly upstreamClient = new PostClient();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 8 * 1024 * 1024 });
  private readonly rateLimit: RateLimitStage;
  private readonly meter: MeterStage;
  /** When an account's plan allowance ends, as the meter knows it (LIMIT_REACHED's Retry-After). */
  private readonly allowanceEnd: AllowanceEnd | undefined;
  readonly maxBodyBytes: number;
  readonly maxBatchCalls: number;
  /** The x-request-id of each upgrade being accepted, for its 101 answer. */
  private readonly upgradeIds = new WeakMap<IncomingMessage, string>();
  readonly maxWebSocketsPerAccount: number;
  /** Per account, its WebSocket connections open (or being opened) in this process. */
  private readonly openWebSockets = new Map<string, number>();
  private readonly served: ServedMethods;

  constructor(private readonly deps: DataPlaneDeps) {
    this.served = deps.served ?? new Map();
    this.rateLimit = deps.rateLimit ?? noRateLimit;
    this.meter = deps.meter ?? noMeter;
    this.allowanceEnd = this.meter.allowanceEndOf?.bind(this.meter);
    this.maxBodyBytes = deps.maxBodyBytes ?? 5 * 1024 * 1024;
    this.maxBatchCalls = deps.maxBatchCalls ?? DEFAULT_MAX_BATCH_CALLS;
    this.maxWebSocketsPerAccount = deps.maxWebSocketsPerAccount ?? DEFAULT_MAX_WEBSOCKETS_PER_ACCOUNT;
    this.wss.on("headers", (headers: string[], req: IncomingMessage) => {
      const id = this.upgradeIds.get(req);
      if (id) headers.push(`X-Request-Id: ${id}`);
    });
  }

  lookup(target: RouteTarget): CompiledEndpoint | undefined {
    if (target.exId !== undefined) return this.deps.directory.byExId(target.exId);
    if (target.host !== undefined) return this.deps.directory.byHost(target.host);
    return undefined;
  }

  /** Answers a refusal; returns the body (for the logs). */
  private answer(
    res: RpcResponse,
    r: Refusal,
    requestId: string,
    headers: Record<string, string> = NO_HEADERS,
    id?: JsonRpcCall["id"],
  ): string {
    const body = errorObject(id, r);
    res.writeHead(r.http, {
      ...JSON_HEADERS,
      ...headers,
      ...refusalHeaders(r),
      "content-length": Buffer.byteLength(body),
      "x-request-id": requestId,
    });
    res.end(body);
    return body;
  }

  /** The lookup, plus the directory's one-time store lookup for a key it does not hold. */
  private async lookupOrLoad(target: RouteTarget): Promise<CompiledEndpoint | undefined> {
    const found = this.lookup(target);
    if (found || target.exId === undefined || !this.deps.directory.resolveMiss) return found;
    return this.deps.directory.resolveMiss(target.exId);
  }

  /**
   * Serves one HTTP request; never rejects (a failure inside a stage answers 500 and is reported).
   * Every answer carries x-request-id: the client's own when it sent a plain one (see SANE_REQUEST_ID),
   * else a new one; error logs are stored under it (a batch's one row under `<id>.<index of its first failure>`).
   */
  handleHttp(req: RpcRequest, res: RpcResponse, target: RouteTarget): Promise<void> {
    const requestId = requestIdOf(req);
    return this.serveHttp(req, res, target, requestId).catch((error) => {
      this.deps.onError?.(error);
      if (!res.headersSent) this.answer(res, refusal("INTERNAL"), requestId);
      else res.destroy();
    });
  }

  private async serveHttp(req: RpcRequest, res: RpcResponse, target: RouteTarget, requestId: string): Promise<void> {
    const startedAt = performance.now();
    const endpoint = this.lookup(target) ?? (await this.lookupOrLoad(target));
    if (!endpoint) {
      req.resume();
      this.answer(res, refusal("NOT_FOUND"), requestId);
      return;
    }
    const settings = endpoint.record;
    const headers: Record<string, string> = settings.options.cors
      ? { ...endpoint.extraHeaders, ...corsHeaders(req) }
      : endpoint.extraHeaders;
    const metered = this.meter !== noMeter;
    const request = new RequestRecord({
      endpoint,
      transport: "http",
      clientIp: clientIpOf(endpoint, req, this.deps.trustsProxy),
      startedAt,
      requestId,
      httpMethod: req.method,
      url: metered ? loggedUrl(req, target) : undefined,
      origin: metered ? originHeaderOf(req.headers) : undefined,
    });
    const inactive = statusRefusal(endpoint, this.allowanceEnd);
    if (inactive) return this.refuseEarly(req, res, request, requestId, inactive, headers);
    if (req.method === "OPTIONS") {
      req.resume();
      res.writeHead(204, { ...headers, allow: "POST, OPTIONS", "x-request-id": requestId });
      res.end();
      return;
    }
    if (req.method !== "POST") {
      return this.refuseEarly(req, res, request, requestId, refusal("METHOD_NOT_ALLOWED"), {
        ...headers,
        allow: "POST, OPTIONS",
      });
    }
    let denied = checkAccess(endpoint, req.headers, request.clientIp, target.pathToken);
    if (denied instanceof Promise) denied = await denied;
    if (denied) return this.refuseEarly(req, res, request, requestId, denied, headers);
    let body: Buffer;
    try {
      // The fast lane's requests arrive read whole: no promise to wait for.
      body = req.body && req.body.length <= this.maxBodyBytes ? req.body : await readBody(req, this.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        const r: Refusal = {
          kind: "TOO_LARGE",
          http: 413,
          code: -32600,
          message: `The body is larger than ${this.maxBodyBytes} bytes.`,
        };
        const sent = this.answer(res, r, requestId, { ...headers, connection: "close" });
        this.finish(request.refusedWhole(r, sent));
        return;
      }
      res.destroy();
      return;
    }
    request.requestBody = body;
    const parsed = parseBody(body);
    if ("error" in parsed) {
      this.finish(request.refusedWhole(parsed.error, this.answer(res, parsed.error, requestId, headers)));
      return;
    }
    const calls = parsed.calls;
    if (parsed.batch && calls.length > this.maxBatchCalls) {
      // Refused before any per-call work (checks, rate limits, pricing): one answer and one error log.
      const tooLarge = batchTooLarge(calls, this.maxBatchCalls);
      res.writeHead(200, {
        ...JSON_HEADERS,
        ...headers,
        "content-length": Buffer.byteLength(tooLarge.body),
        "x-request-id": requestId,
      });
      res.end(tooLarge.body);
      if (metered) request.parsed(calls, methodsOf(calls));
      return this.finish(request.refusedWhole(tooLarge.refusal, tooLarge.body));
    }
    let admitted = admitCalls(endpoint, request, calls, this.rateLimit);
    if (admitted instanceof Promise) admitted = await admitted;
    if (admitted.whole) {
      const sent = this.answer(res, admitted.whole, requestId, headers);
      return this.finish(request.refusedWhole(admitted.whole, sent));
    }
    const { perCall, refused } = admitted;
    request.refused = refused;
    const upstream = this.deps.upstreams.get(settings.network);
    const own = this.ownAnswers(endpoint, upstream, calls, request.methods, perCall);
    if (!upstream && refused.length + (own?.size ?? 0) < calls.length) {
      const r = refusal("NO_UPSTREAM", `No upstream node is configured for the network ${settings.network}.`, {
        network: settings.network,
      });
      return this.finish(request.refusedWhole(r, this.answer(res, r, requestId, headers)));
    }
    let status = 200;
    let out: Buffer | string;
    try {
      if (refused.length === 0 && own === null && upstream) {
        // The common case: forward the client's bytes untouched.
        const answer = await this.upstreamClient.post(upstream.httpUrl, body);
        status = answer.status;
        out = answer.body;
      } else if (!parsed.batch) {
        const answer = own?.get(0);
        out = answer ? await answer : refusedCallsAnswer(calls, false, () => refused[0].refusal);
      } else {
        out = await this.answerBatch(upstream?.httpUrl, calls, perCall, own);
      }
    } catch {
      const r = refusal("UPSTREAM_FAILED", undefined, { network: settings.network });
      return this.finish(request.refusedWhole(r, this.answer(res, r, requestId, headers)));
    }
    const length = typeof out === "string" ? Buffer.byteLength(out) : out.length;
    res.writeHead(
      status,
      headers === NO_HEADERS
        ? { "content-type": "application/json", "content-length": length, "x-request-id": requestId }
        : { ...JSON_HEADERS, ...headers, "content-length": length, "x-request-id": requestId },
    );
    res.end(out);
    // Metered once the answer is on its way (res.end corks the socket and sends on the next tick).
    if (this.meter !== noMeter) process.nextTick(this.meterAnswered, request, status, length, out);
  }

  /**
   * Hands an answered request to the meter; a meter that throws is reported like any failure inside the
   * proxy, never left uncaught. A bound field, so that no closure is made per request.
   */
  private readonly meterAnswered = (request: RequestRecord, status: number, length: number, out: Buffer | string) => {
    try {
      this.finish(request.answered(status, length, out));
    } catch (error) {
      this.deps.onError?.(error);
    }
  };

  /**
   * Answers a request refused before its body was read at once, then (only with a meter) reads the body to
   * log its methods and bytes.
   */
  private async refuseEarly(
    req: RpcRequest,
    res: RpcResponse,
    request: RequestRecord,
    requestId: string,
    r: Refusal,
    headers: Record<string, string>,
  ): Promise<void> {
    const sent = this.answer(res, r, requestId, headers);
    if (this.meter === noMeter) {
      req.resume();
      return;
    }
    let body: Buffer | null = null;
    try {
      body = await readBody(req, this.maxBodyBytes);
    } catch {
      // Too large or cut off: logged without its body.
    }
    const found = body ? callsOf(body) : undefined;
    if (found) request.parsed(found.calls, found.methods);
    request.requestBody = body && body.length > 0 ? body : null;
    this.finish(request.refusedWhole(r, sent));
  }

  /** Hands a finished request to the meter stage (nothing is recorded when no meter is attached). */
  private finish(request: RequestRecord): void {
    if (this.meter === noMeter) return;
    this.meter.record(request.end());
  }

  /**
   * The answers to calls that do not go to the served node, started, by call index: a method the service
   * answers itself, and with the Archive add-on a state read at a numbered block the archive node has
   * (archive-calls.ts archiveWay: older than the node keeps, or at the node and then the archive node when
   * the node no longer keeps it). Null when there is none: the usual request, decided with a map lookup per call.
   */
  private ownAnswers(
    endpoint: CompiledEndpoint,
    upstream: Upstream | undefined,
    calls: unknown[],
    methods: string[],
    perCall: (Refusal | undefined)[],
  ): Map<number, Promise<string>> | null {
    const network = endpoint.record.network;
    const archive = endpoint.record.archive ? upstream?.archive : undefined;
    const archiveBelow = archive?.routesBelow();
    if (this.served.size === 0 && archiveBelow === undefined) return null;
    const replayedTo = archive?.replayedTo();
    let own: Map<number, Promise<string>> | null = null;
    for (let i = 0; i < methods.length; i++) {
      if (perCall[i]) continue;
      const call = calls[i] as JsonRpcCall;
      let answer: Promise<string> | undefined;
      if (this.served.has(methods[i])) answer = serveCall(this.served, call, network, this.deps.onError);
      else if (archiveBelow !== undefined && archive && upstream) {
        const block = stateBlockOf(call);
        const way = block === undefined ? "served" : archiveWay(block, archiveBelow, replayedTo);
        if (way === "archive") answer = this.forwardOne(archive.httpUrl, call, network);
        else if (way === "served-else-archive")
          answer = this.forwardOrArchive(upstream.httpUrl, archive.httpUrl, call, network);
      }
      if (!answer) continue;
      own ??= new Map();
      own.set(i, answer);
    }
    return own;
  }

  /**
   * A call at a block the archive node has, sent to the served node; the archive node's answer instead when
   * the served node answers that it no longer keeps that block's state (it left the window since the
   * archive follower last looked).
   */
  private async forwardOrArchive(servedUrl: string, archiveUrl: string, call: JsonRpcCall, network: string) {
    const answer = await this.forwardOne(servedUrl, call, network);
    return stateNotKept(answer) ? this.forwardOne(archiveUrl, call, network) : answer;
  }

  /** One call's answer from a node (the archive node), or the proxy's UPSTREAM_FAILED for it. */
  private async forwardOne(url: string, call: JsonRpcCall, network: string): Promise<string> {
    try {
      return (await this.upstreamClient.post(url, JSON.stringify(call))).body.toString("utf8");
    } catch {
      return errorObject(call.id, refusal("UPSTREAM_FAILED", undefined, { network }));
    }
  }

  /**
   * A batch where some calls were refused or are answered otherwise (ownAnswers): forward the rest to the
   * node in one batch while the others are answered, and answer in the original order.
   */
  private async answerBatch(
    upstreamUrl: string | undefined,
    calls: unknown[],
    perCall: (Refusal | undefined)[],
    own: Map<number, Promise<string>> | null,
  ): Promise<string> {
    const allowed = calls.filter((_, i) => !perCall[i] && !own?.has(i));
    const answers = new Map<string, unknown>();
    let inOrder: unknown[] = [];
    if (allowed.length > 0 && upstreamUrl) {
      const answer = await this.upstreamClient.post(upstreamUrl, JSON.stringify(allowed));
      const parsedAnswer = JSON.parse(answer.body.toString("utf8")) as unknown;
      inOrder = Array.isArray(parsedAnswer) ? parsedAnswer : [parsedAnswer];
      for (const a of inOrder) {
        if (a && typeof a === "object" && "id" in a) answers.set(JSON.stringify((a as { id: unknown }).id), a);
      }
    }
    const served = new Map<number, string>();
    for (const [i, answer] of own ?? []) served.set(i, await answer);
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
      const own = served.get(i);
      if (own !== undefined) {
        parts.push(own);
        return;
      }
      const found = answers.get(JSON.stringify(id)) ?? inOrder[next];
      next++;
      if (found !== undefined) parts.push(JSON.stringify(found));
    });
    return `[${parts.join(",")}]`;
  }

  /**
   * Handles an HTTP upgrade for a WebSocket client: checks as for HTTP, then bridges to the upstream.
   * The upgrade's answer (101 or a refusal) carries x-request-id; a refusal is metered like an HTTP one.
   */
  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: RouteTarget): Promise<void> {
    const startedAt = performance.now();
    const requestId = requestIdOf(req);
    const reject = (r: Refusal, endpoint?: CompiledEndpoint, clientIp = "") => {
      const body = errorObject(null, r);
      const extra = Object.entries(refusalHeaders(r) ?? {})
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("");
      socket.end(
        `HTTP/1.1 ${r.http} ${r.kind}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`,
      );
      if (!endpoint || this.meter === noMeter) return;
      const request = new RequestRecord({
        endpoint,
        transport: "ws",
        clientIp,
        startedAt,
        requestId,
        httpMethod: req.method,
        url: loggedUrl(req, target),
        origin: originHeaderOf(req.headers),
      });
      this.finish(request.refusedWhole(r, body));
    };
    const endpoint = await this.lookupOrLoad(target);
    if (!endpoint) return reject(refusal("NOT_FOUND"));
    const record = endpoint.record;
    const clientIp = clientIpOf(endpoint, req, this.deps.trustsProxy);
    const inactive = statusRefusal(endpoint, this.allowanceEnd);
    if (inactive) return reject(inactive, endpoint, clientIp);
    const denied = await checkAccess(endpoint, req.headers, clientIp, target.pathToken);
    if (denied) return reject(denied, endpoint, clientIp);
    const wsUrl = this.deps.upstreams.get(record.network)?.wsUrl;
    if (!wsUrl) {
      return reject(
        refusal("NO_UPSTREAM", `No upstream WebSocket is configured for the network ${record.network}.`, {
          network: record.network,
        }),
        endpoint,
        clientIp,
      );
    }
    const { accountId } = record;
    const open = this.openWebSockets.get(accountId) ?? 0;
    if (open >= this.maxWebSocketsPerAccount) return reject(tooManyWebSockets(), endpoint, clientIp);
    // Counted from here until the socket closes, however it closes (refused, failed, or ended by either side).
    this.openWebSockets.set(accountId, open + 1);
    socket.once("close", () => {
      const left = (this.openWebSockets.get(accountId) ?? 1) - 1;
      if (left > 0) this.openWebSockets.set(accountId, left);
      else this.openWebSockets.delete(accountId);
    });
    this.upgradeIds.set(req, requestId);
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
    const metered = this.meter !== noMeter;
    const url = metered ? loggedUrl(req, target) : "";
    const origin = metered ? originHeaderOf(req.headers) : undefined;
    // Messages forwarded and waiting for their reply (by reply key), so the reply's bytes, and a JSON-RPC
    // error in it, are metered with the message. Only kept when a meter is attached.
    const awaiting = new Map<string, RequestRecord>();
    const meterNow = (request: RequestRecord) => this.meter.record(request.end());
    const meterReply = (data: Buffer, delivered: boolean) => {
      const keys = replyKeys(data);
      if (keys === null) {
        // A subscription notification: metered as a call of its own (eth_subscription), with its bytes,
        // taking no time, when it reached the client (the counting rule bills each event delivered).
        if (!delivered) return;
        const notification = new RequestRecord({
          endpoint: checked,
          transport: "ws",
          clientIp,
          startedAt: performance.now(),
          httpMethod: "WS",
          url,
          origin,
        });
        notification.methods = [SUBSCRIPTION_METHOD];
        notification.untimed = true;
        notification.pushed = true;
        this.meter.record(notification.answered(200, data.length, null));
        return;
      }
      for (const key of keys ?? []) {
        const request = awaiting.get(key);
        if (!request) continue;
        awaiting.delete(key);
        return meterNow(request.answered(request.httpStatus, data.length, data));
      }
    };
    const closeBoth = (code: number, reason: string) => {
      if (client.readyState === WebSocket.OPEN) client.close(code, reason.slice(0, 120));
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    };
    upstream.on("open", () => {
      for (const m of pending) upstream.send(m);
      pending.length = 0;
    });
    upstream.on("message", (data: RawData, isBinary: boolean) => {
      const delivered = client.readyState === WebSocket.OPEN;
      if (delivered) client.send(data as Buffer, { binary: isBinary });
      if (metered && !isBinary) meterReply(data as Buffer, delivered);
    });
    upstream.on("close", () => closeBoth(1011, "The upstream node closed the connection."));
    upstream.on("error", () => closeBoth(1011, "The upstream node did not answer."));
    client.on("close", () => {
      if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.close();
      // Messages still waiting for a reply are metered without one (and so without an answer time).
      for (const event of awaiting.values()) {
        event.untimed = true;
        meterNow(event);
      }
      awaiting.clear();
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
        const inactive = statusRefusal(current, this.allowanceEnd);
        if (inactive) return closeBoth(1008, inactive.message);
        const denied = await checkAccess(current, req.headers, clientIp, target.pathToken);
        if (denied) return closeBoth(1008, denied.message);
        checked = current;
      }
      const raw = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
      const parsed = parseBody(raw);
      const request = new RequestRecord({
        endpoint: current,
        transport: "ws",
        clientIp,
        startedAt,
        requestId: metered ? newRequestId() : undefined,
        httpMethod: "WS",
        url,
        origin,
      });
      request.requestBody = raw;
      if ("error" in parsed) {
        const sent = errorObject(null, parsed.error);
        client.send(sent);
        if (metered) meterNow(request.refusedWhole(parsed.error, sent, Buffer.byteLength(sent)));
        return;
      }
      if (parsed.batch && parsed.calls.length > this.maxBatchCalls) {
        const tooLarge = batchTooLarge(parsed.calls, this.maxBatchCalls);
        client.send(tooLarge.body);
        if (metered)
          meterNow(
            request
              .parsed(parsed.calls, methodsOf(parsed.calls))
              .refusedWhole(tooLarge.refusal, tooLarge.body, Buffer.byteLength(tooLarge.body)),
          );
        return;
      }
      let admitted = admitCalls(current, request, parsed.calls, this.rateLimit);
      if (admitted instanceof Promise) admitted = await admitted;
      const { whole: requestRefusal, perCall } = admitted;
      let refused = admitted.refused;
      let sent: string | null = null;
      const upstream = this.deps.upstreams.get(current.record.network);
      const own =
        requestRefusal || refused.length > 0
          ? null
          : this.ownAnswers(current, upstream, parsed.calls, request.methods, perCall);
      if (requestRefusal) {
        sent = refusedCallsAnswer(parsed.calls, parsed.batch, () => requestRefusal);
        client.send(sent);
      } else if (refused.length === 0 && own === null) {
        send(raw.toString("utf8"));
      } else if (refused.length === 0) {
        // Calls the service answers itself: a batch's other calls go to the node's HTTP side in one batch, so
        // the answer is one array in the calls' order (an eth_subscribe among them gets the node's HTTP
        // answer, an error: a subscription needs the socket, so send it in a message of its own).
        const single = own?.get(0);
        sent =
          parsed.batch || !single
            ? await this.answerBatch(upstream?.httpUrl, parsed.calls, perCall, own)
            : await single;
        if (client.readyState === WebSocket.OPEN) client.send(sent);
      } else {
        // A WebSocket batch answer cannot be merged with the upstream's without holding it back, so a
        // batch with any refused call is answered whole: each call with its own reason (the others not sent).
        for (let i = 0; i < perCall.length; i++) perCall[i] ??= BATCH_REFUSED;
        refused = refusedOf(perCall);
        sent = refusedCallsAnswer(parsed.calls, parsed.batch, (i) => perCall[i] as Refusal);
        client.send(sent);
      }
      if (!metered) return;
      request.refused = refused;
      request.requestRefusal = requestRefusal;
      request.answered(requestRefusal?.http ?? 200, sent === null ? null : Buffer.byteLength(sent), sent);
      const key = sent === null ? replyKeyOfCall(parsed.batch, parsed.calls) : undefined;
      if (key === undefined || awaiting.size >= MAX_PENDING_REPLIES) {
        request.untimed = sent === null;
        return meterNow(request);
      }
      // A client reusing an id before its reply came: the earlier message is metered without a reply.
      const earlier = awaiting.get(key);
      if (earlier) {
        earlier.untimed = true;
        meterNow(earlier);
      }
      awaiting.set(key, request);
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
