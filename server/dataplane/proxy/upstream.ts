import { Pool } from "undici";
import type { Upstream } from "../chain/nodes.ts";

// undici takes headers as a flat array without converting them per request.
const JSON_HEADERS = ["content-type", "application/json"];

export interface UpstreamAnswer {
  status: number;
  body: Buffer;
}

/** Forwards JSON-RPC bodies over pooled keep-alive connections, one undici Pool per upstream origin. */
export class UpstreamClient {
  private pools = new Map<string, { pool: Pool; path: string }>();

  constructor(private readonly options: { connections?: number; timeoutMs?: number } = {}) {}

  private poolFor(httpUrl: string): { pool: Pool; path: string } {
    let entry = this.pools.get(httpUrl);
    if (!entry) {
      const url = new URL(httpUrl);
      entry = {
        pool: new Pool(url.origin, {
          connections: this.options.connections ?? 128,
          keepAliveTimeout: 30_000,
          headersTimeout: this.options.timeoutMs ?? 30_000,
          bodyTimeout: this.options.timeoutMs ?? 30_000,
        }),
        // The upstream URL's own path and query (a provider's key often lives there) are kept.
        path: `${url.pathname}${url.search}`,
      };
      this.pools.set(httpUrl, entry);
    }
    return entry;
  }

  /** POSTs a body and collects the answer, through undici's dispatch API (no stream or promise per chunk). */
  post(upstream: Upstream, body: Buffer | string): Promise<UpstreamAnswer> {
    const { pool, path } = this.poolFor(upstream.httpUrl);
    return new Promise((resolve, reject) => {
      let status = 0;
      const chunks: Buffer[] = [];
      pool.dispatch(
        { method: "POST", path, headers: JSON_HEADERS, body },
        {
          // undici's Pool here still asserts the classic handler methods.
          onConnect() {},
          onHeaders(statusCode) {
            status = statusCode;
            return true;
          },
          onData(chunk) {
            chunks.push(chunk);
            return true;
          },
          onComplete() {
            resolve({ status, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
          },
          onError(error) {
            reject(error);
          },
        },
      );
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.pool.close()));
    this.pools.clear();
  }
}
