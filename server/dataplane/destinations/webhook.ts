import { gzipSync } from "node:zlib";
import { Pool } from "undici";
import { assertCompression, batchMetadata, errorMessage } from "./common.ts";
import { NONCE_HEADER, SIGNATURE_HEADER, signPayload, TIMESTAMP_HEADER } from "./signature.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type TestResult,
  type WebhookAttributes,
} from "./types.ts";

/**
 * POSTs each batch to a URL. Body: the payload JSON; with metadata BODY, `{ "data": <payload>,
 * "metadata": {...} }`; with HEADER, the metadata goes in `x-qn-*` headers (batch-start-range,
 * batch-end-range, data-size, reorg, stream-id, network, dataset). GZIP sets content-encoding: gzip.
 * Signed as described in signature.ts. 2xx acknowledges; anything else is a failure carrying the status
 * and the first 500 characters of the answer (retryable for 408, 429 and 5xx).
 *
 * test(): sends nothing with data; it POSTs an empty JSON array with header `x-qn-test: true`, signed
 * like a delivery, and reports the status. Receivers that act on payloads see an empty batch.
 */
const RESERVED = new Set(["content-type", "content-encoding", "content-length", "host", "transfer-encoding"]);

export class WebhookDestination implements Destination {
  readonly type = "WEBHOOK";
  private readonly url: URL;
  private readonly compression: "NONE" | "GZIP";
  private readonly timeoutMs: number;
  /** One keep-alive pool per destination, closed with it: no per-request lookup in a global agent. */
  private readonly pool: Pool;
  private readonly path: string;

  constructor(
    private readonly attrs: WebhookAttributes,
    private readonly ctx: DestinationContext,
  ) {
    try {
      this.url = new URL(attrs.url);
    } catch {
      throw new DestinationError("webhook url is not a valid URL", { retryable: false });
    }
    if (this.url.protocol !== "http:" && this.url.protocol !== "https:") {
      throw new DestinationError("webhook url must be http or https", { retryable: false });
    }
    this.compression = assertCompression(attrs.compression) as "NONE" | "GZIP";
    this.timeoutMs = Math.max(1, attrs.postTimeoutSec ?? 10) * 1000;
    for (const name of Object.keys(attrs.headers ?? {})) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
        throw new DestinationError(`header name "${name}" is not a valid HTTP header name`, { retryable: false });
      }
    }
    this.path = `${this.url.pathname}${this.url.search}`;
    this.pool = new Pool(this.url.origin, { connections: 4, connect: { timeout: this.timeoutMs } });
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    try {
      const { status } = await this.post("[]", { "x-qn-test": "true" });
      return { ok: true, message: `webhook answered HTTP ${status}`, durationMs: performance.now() - t };
    } catch (e) {
      return { ok: false, message: errorMessage(e), durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    const t = performance.now();
    const meta = batchMetadata(this.ctx, batch);
    const mode = this.ctx.metadata ?? "NONE";
    const body =
      mode === "BODY" ? `{"data":${batch.payloadJson},"metadata":${JSON.stringify(meta)}}` : batch.payloadJson;
    const extra: Record<string, string> = {};
    if (mode === "HEADER") {
      extra["x-qn-batch-start-range"] = String(meta.batch_start_range);
      extra["x-qn-batch-end-range"] = String(meta.batch_end_range);
      extra["x-qn-data-size"] = String(meta.data_size_bytes);
      extra["x-qn-reorg"] = String(meta.is_reorg);
      extra["x-qn-stream-id"] = meta.stream_id;
      extra["x-qn-network"] = meta.network;
      extra["x-qn-dataset"] = meta.dataset;
    }
    const { status, bytes } = await this.post(body, extra);
    return { bytes, durationMs: performance.now() - t, detail: `HTTP ${status}` };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async post(body: string, extra: Record<string, string>): Promise<{ status: number; bytes: number }> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.attrs.headers ?? {})) {
      if (!RESERVED.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
    }
    Object.assign(headers, extra, { "content-type": "application/json" });
    if (this.attrs.securityToken) {
      const s = signPayload(this.attrs.securityToken, body);
      headers[NONCE_HEADER] = s.nonce;
      headers[TIMESTAMP_HEADER] = s.timestamp;
      headers[SIGNATURE_HEADER] = s.signature;
    }
    const wire = this.compression === "GZIP" ? gzipSync(body) : body;
    if (this.compression === "GZIP") headers["content-encoding"] = "gzip";
    // The post timeout bounds the whole exchange: connecting (the pool's connect timeout), waiting for
    // the answer's head, then reading its body within what is left. undici's own timers cover the first
    // two; a timer of ours only runs while a body is read (an AbortSignal per request cost more).
    const started = performance.now();
    const timedOut = `no answer within ${this.timeoutMs / 1000} s`;
    let text: string;
    let statusCode: number;
    try {
      const res = await this.pool.request({
        method: "POST",
        path: this.path,
        headers,
        body: wire,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      statusCode = res.statusCode;
      const left = this.timeoutMs - (performance.now() - started);
      const timer = setTimeout(() => res.body.destroy(new Error(timedOut)), Math.max(0, left));
      try {
        text = await res.body.text();
      } catch {
        text = "";
      } finally {
        clearTimeout(timer);
      }
    } catch (e) {
      const reason =
        e instanceof Error && /timeout/i.test(`${e.name} ${(e as { code?: string }).code ?? ""}`)
          ? timedOut
          : errorMessage(e);
      throw new DestinationError(`webhook POST to ${this.url.host} failed: ${reason}`, { retryable: true });
    }
    if (statusCode < 200 || statusCode >= 300) {
      const trimmed = text.length > 500 ? `${text.slice(0, 500)}…` : text;
      const retryable = statusCode === 408 || statusCode === 429 || statusCode >= 500;
      throw new DestinationError(`webhook answered HTTP ${statusCode}: ${trimmed}`, {
        retryable,
        status: statusCode,
      });
    }
    return { status: statusCode, bytes: typeof wire === "string" ? Buffer.byteLength(wire) : wire.length };
  }
}
