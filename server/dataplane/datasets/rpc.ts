import type { Pool } from "undici";
import { scanBatchAnswer } from "./json-scan.ts";

/**
 * A small JSON-RPC 2.0 client over an undici pool, sending batches as one HTTP request. Errors name
 * the method and the node's answer but never the URL, which often carries an endpoint token.
 */

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** A JSON-RPC error answered by the node (code and message as the node sent them). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`${method} failed: ${rpcMessage} (code ${code})`);
    this.name = "RpcError";
  }

  /** -32601 is "method not found"; some nodes answer disabled namespaces with other codes and this text. */
  get methodNotFound(): boolean {
    return (
      this.code === -32601 ||
      /method .*(not found|not supported|not available|does not exist|is not available)|unsupported method/i.test(
        this.rpcMessage,
      )
    );
  }
}

/**
 * The node refused a batch as a whole (one error object instead of an array of answers, or HTTP 413),
 * as nodes do for batches over their limit (Erigon's default is 100 calls).
 */
export class RpcBatchRefused extends RpcError {
  constructor(code: number, rpcMessage: string) {
    super("batch", code, rpcMessage);
    this.name = "RpcBatchRefused";
  }
}

/** The node could not be reached or answered something that is not JSON-RPC. */
export class RpcTransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RpcTransportError";
  }
}

export interface RpcClientOptions {
  /** Whole-request timeout for one HTTP request (a batch counts as one). */
  timeoutMs?: number;
  /**
   * Calls per HTTP request; larger batches are split. Geth, Besu and Nethermind accept 1,000 by default;
   * a node that refuses a batch as too large gets halves of it from then on (see {@link RpcBatchRefused}).
   */
  maxBatchSize?: number;
  connections?: number;
}

interface RpcResponse {
  id: number;
  result?: unknown;
  error?: { code: number; message: string };
}

export class RpcClient {
  /** Made with the first request: undici loads then, not with the service's modules (~0.1 s of a start). */
  private pool: Promise<Pool> | null = null;
  private closed: Promise<void> | null = null;
  private readonly origin: string;
  private readonly connections: number;
  private readonly path: string;
  private readonly timeoutMs: number;
  private maxBatchSize: number;
  private nextId = 1;

  constructor(url: string, options: RpcClientOptions = {}) {
    const u = new URL(url);
    this.path = `${u.pathname}${u.search}`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxBatchSize = options.maxBatchSize ?? 1000;
    this.origin = u.origin;
    this.connections = options.connections ?? 4;
  }

  private poolOf(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error("the client is closed"));
    this.pool ??= import("undici").then(({ Pool }) => new Pool(this.origin, { connections: this.connections }));
    return this.pool;
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const [r] = await this.batchSettled([{ method, params }]);
    if (r instanceof Error) throw r;
    return r as T;
  }

  /** Runs calls as JSON-RPC batches; throws the first error. Results are in the order of the calls. */
  async batch(calls: RpcCall[]): Promise<unknown[]> {
    const results = await this.batchSettled(calls);
    const failure = results.find((r) => r instanceof Error);
    if (failure) throw failure;
    return results;
  }

  /** Like batch, but each slot holds its result or its RpcError. Transport failures still throw. */
  async batchSettled(calls: RpcCall[]): Promise<unknown[]> {
    return this.inRequests(calls, (part) => this.send(part));
  }

  /**
   * Like batch, but each result as the node wrote it (its JSON source text), never built into objects:
   * for results that are passed on whole. A missing result is `null`.
   */
  async batchJson(calls: RpcCall[]): Promise<string[]> {
    return this.inRequests(calls, (part) => this.sendJson(part));
  }

  /**
   * Like batchSettled in two steps: resolves once the node's answer has arrived, with the function that
   * parses it, for a caller that sends its next request before it spends time on this answer. One HTTP
   * request, never split: for small batches (a refused one throws RpcBatchRefused from the parse).
   */
  async batchArrived(calls: RpcCall[]): Promise<() => unknown[]> {
    if (calls.length === 0) return () => [];
    const { first, status, text } = await this.exchange(calls);
    return () => this.answers(calls, first, status, text);
  }

  close(): Promise<void> {
    this.closed ??= this.pool ? this.pool.then((pool) => pool.close()) : Promise.resolve();
    return this.closed;
  }

  /**
   * Sends `calls` in requests of at most maxBatchSize calls, one after another. A request the node
   * refuses as too large is sent again in halves, and the halved size is kept for later requests.
   */
  private async inRequests<T>(calls: RpcCall[], sendPart: (part: RpcCall[]) => Promise<T[]>): Promise<T[]> {
    const out: T[] = [];
    let i = 0;
    while (i < calls.length) {
      const part = calls.slice(i, i + this.maxBatchSize);
      try {
        out.push(...(await sendPart(part)));
        i += part.length;
      } catch (e) {
        if (!(e instanceof RpcBatchRefused) || part.length === 1) throw e;
        this.maxBatchSize = Math.min(this.maxBatchSize, Math.ceil(part.length / 2));
      }
    }
    return out;
  }

  private async send(calls: RpcCall[]): Promise<unknown[]> {
    if (calls.length === 0) return [];
    const { first, status, text } = await this.exchange(calls);
    return this.answers(calls, first, status, text);
  }

  private async sendJson(calls: RpcCall[]): Promise<string[]> {
    if (calls.length === 0) return [];
    const { first, status, text } = await this.exchange(calls);
    const scanned = status >= 200 && status < 300 ? tryScan(text) : null;
    if (!scanned) {
      // Not a batch of responses (a refused batch, an HTTP error, not JSON): said as batch() says it.
      const results = this.answers(calls, first, status, text);
      const failure = results.find((r) => r instanceof Error);
      if (failure) throw failure;
      return results.map((r) => JSON.stringify(r ?? null));
    }
    const byId = new Map(scanned.map((r) => [r.id, r]));
    return calls.map((c, i) => {
      const r = byId.get(String(first + i));
      if (!r) throw new RpcTransportError(`node sent no answer for ${c.method}`);
      if (r.error !== undefined && r.error !== "null") {
        const e = JSON.parse(r.error) as { code: number; message: string };
        throw new RpcError(c.method, e.code, e.message);
      }
      return r.result ?? "null";
    });
  }

  /** One HTTP request carrying `calls` as a JSON-RPC batch; the ids are first, first + 1, … */
  private async exchange(calls: RpcCall[]): Promise<{ first: number; status: number; text: string }> {
    const first = this.nextId;
    this.nextId += calls.length;
    const body = JSON.stringify(
      calls.map((c, i) => ({ jsonrpc: "2.0", id: first + i, method: c.method, params: c.params })),
    );
    let status: number;
    let text: string;
    try {
      const pool = await this.poolOf();
      const res = await pool.request({
        path: this.path,
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      throw new RpcTransportError(`node unreachable (${calls[0].method}${calls.length > 1 ? " …" : ""}): ${reason}`, {
        cause: e,
      });
    }
    return { first, status, text };
  }

  /** The results (or RpcErrors) of `calls` from the node's answer; throws when the answer is not one. */
  private answers(calls: RpcCall[], first: number, status: number, text: string): unknown[] {
    if (status === 413 && calls.length > 1) throw new RpcBatchRefused(-32600, "HTTP 413: the batch is too large");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RpcTransportError(`node answered HTTP ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    // A node that refuses the whole batch answers one error object instead of an array.
    const responses: RpcResponse[] = Array.isArray(parsed) ? parsed : [parsed as RpcResponse];
    if (!Array.isArray(parsed) && (parsed as RpcResponse).error && calls.length > 1) {
      const e = (parsed as RpcResponse).error as { code: number; message: string };
      throw new RpcBatchRefused(e.code, e.message);
    }
    if (status < 200 || status >= 300) {
      const e = responses[0]?.error;
      if (e) throw new RpcError(calls[0].method, e.code, e.message);
      throw new RpcTransportError(`node answered HTTP ${status}: ${text.slice(0, 200)}`);
    }
    const byId = new Map(responses.map((r) => [r.id, r]));
    return calls.map((c, i) => {
      const r = byId.get(first + i);
      if (!r) return new RpcTransportError(`node sent no answer for ${c.method}`);
      if (r.error) return new RpcError(c.method, r.error.code, r.error.message);
      return r.result;
    });
  }
}

function tryScan(text: string) {
  try {
    return scanBatchAnswer(text);
  } catch {
    return null;
  }
}
