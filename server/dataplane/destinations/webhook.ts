import { gzipSync } from "node:zlib";
import type { EgressPolicy } from "../../platform/egress.ts";
import { AnswerTimeout, PostClient, type PostRequest } from "../http/post-client.ts";
import { assertCompression, batchMetadata, errorMessage, isEgressRefusal } from "./common.ts";
import { NONCE_HEADER, SIGNATURE_HEADER, signPayload, TIMESTAMP_HEADER } from "./signature.ts";
import {
  type DeliveryAck,
  type DeliveryBatch,
  type Destination,
  type DestinationContext,
  DestinationError,
  type PreparedDelivery,
  type TestResult,
  type WebhookAttributes,
} from "./types.ts";

/** A prepared request older than this is made again before it is sent (see prepare()). */
const PREPARED_FRESH_MS = 1000;

interface WebhookRequest {
  post: PostRequest;
  /** Bytes on the wire (after compression). */
  bytes: number;
  /** performance.now() when it was built and signed. */
  madeAt: number;
}

const RESERVED = new Set(["content-type", "content-encoding", "content-length", "host", "transfer-encoding"]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header values are visible ASCII, spaces and tabs: no CR, LF or other control characters. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

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
export class WebhookDestination implements Destination {
  readonly type = "WEBHOOK";
  private readonly url: URL;
  private readonly compression: "NONE" | "GZIP";
  private readonly timeoutMs: number;
  /** Kept-alive connections of this destination, closed with it. */
  private readonly client: PostClient;
  /** The user's headers and content-encoding as header lines, built once. */
  private readonly fixedHeaderLines: string;

  constructor(
    private readonly attrs: WebhookAttributes,
    private readonly ctx: DestinationContext,
    egress: EgressPolicy,
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
    let lines = "";
    for (const [name, value] of Object.entries(attrs.headers ?? {})) {
      // The schema's map type allows a missing value; JSON never has one.
      if (value === undefined) continue;
      if (!HEADER_NAME.test(name)) {
        throw new DestinationError(`header name "${name}" is not a valid HTTP header name`, { retryable: false });
      }
      if (!HEADER_VALUE.test(value)) {
        throw new DestinationError(
          `header "${name}" has a value HTTP does not allow (only visible ASCII characters, spaces and tabs)`,
          {
            retryable: false,
          },
        );
      }
      if (!RESERVED.has(name.toLowerCase())) lines += `${name.toLowerCase()}: ${value}\r\n`;
    }
    if (this.compression === "GZIP") lines += "content-encoding: gzip\r\n";
    this.fixedHeaderLines = lines;
    // The post timeout bounds the whole exchange (connecting, sending, the answer's head and body).
    this.client = new PostClient({ connections: 4, maxIdle: 4, timeoutMs: this.timeoutMs, egress });
  }

  async test(): Promise<TestResult> {
    const t = performance.now();
    try {
      const { status } = await this.send(this.request("[]", "x-qn-test: true\r\n"));
      return { ok: true, message: `webhook answered HTTP ${status}`, durationMs: performance.now() - t };
    } catch (e) {
      return { ok: false, message: errorMessage(e), durationMs: performance.now() - t };
    }
  }

  async deliver(batch: DeliveryBatch): Promise<DeliveryAck> {
    return this.ack(await this.send(this.batchRequest(batch)));
  }

  /**
   * The request is built and signed now; one sent later than PREPARED_FRESH_MS after this is built
   * and signed again, so its timestamp stays current (the batch before it may have been retried).
   */
  prepare(batch: DeliveryBatch): PreparedDelivery {
    const request = this.batchRequest(batch);
    return {
      send: async () =>
        this.ack(
          await this.send(performance.now() - request.madeAt <= PREPARED_FRESH_MS ? request : this.batchRequest(batch)),
        ),
    };
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private ack(sent: { status: number; bytes: number; durationMs: number }): DeliveryAck {
    return { bytes: sent.bytes, durationMs: sent.durationMs, detail: `HTTP ${sent.status}`, status: sent.status };
  }

  /** A batch's request: its payload, with metadata in the body or headers as configured. */
  private batchRequest(batch: DeliveryBatch): WebhookRequest {
    const meta = batchMetadata(this.ctx, batch);
    const mode = this.ctx.metadata ?? "NONE";
    const body =
      mode === "BODY" ? `{"data":${batch.payloadJson},"metadata":${JSON.stringify(meta)}}` : batch.payloadJson;
    const extra =
      mode === "HEADER"
        ? `x-qn-batch-start-range: ${meta.batch_start_range}\r\nx-qn-batch-end-range: ${meta.batch_end_range}\r\n` +
          `x-qn-data-size: ${meta.data_size_bytes}\r\nx-qn-reorg: ${meta.is_reorg}\r\n` +
          `x-qn-stream-id: ${meta.stream_id}\r\nx-qn-network: ${meta.network}\r\nx-qn-dataset: ${meta.dataset}\r\n`
        : "";
    return this.request(body, extra);
  }

  /** A POST of `body` with the fixed headers, `extraLines` and the signature, ready to send. */
  private request(body: string, extraLines: string): WebhookRequest {
    let lines = this.fixedHeaderLines + extraLines;
    // Encoded once: signed, compressed and sent as these bytes (each encoding or count of a batch's
    // text costs microseconds).
    const bodyBytes = Buffer.from(body);
    if (this.attrs.securityToken) {
      const s = signPayload(this.attrs.securityToken, bodyBytes);
      lines += `${NONCE_HEADER}: ${s.nonce}\r\n${TIMESTAMP_HEADER}: ${s.timestamp}\r\n${SIGNATURE_HEADER}: ${s.signature}\r\n`;
    }
    const wire = this.compression === "GZIP" ? gzipSync(bodyBytes) : bodyBytes;
    return { post: this.client.request(this.url.href, wire, lines), bytes: wire.length, madeAt: performance.now() };
  }

  /** Sends a request; a 2xx answer or a DestinationError. */
  private async send(request: WebhookRequest): Promise<{ status: number; bytes: number; durationMs: number }> {
    const started = performance.now();
    let status: number;
    let text: string;
    try {
      const answer = await this.client.send(request.post);
      status = answer.status;
      text = answer.body.toString("utf8");
    } catch (e) {
      // A 2xx whose body never ends was still acknowledged by its status.
      if (e instanceof AnswerTimeout && e.status >= 200 && e.status < 300)
        return { status: e.status, bytes: request.bytes, durationMs: performance.now() - started };
      const reason = e instanceof AnswerTimeout ? `no answer within ${this.timeoutMs / 1000} s` : errorMessage(e);
      throw new DestinationError(`webhook POST to ${this.url.host} failed: ${reason}`, {
        retryable: !isEgressRefusal(e),
      });
    }
    if (status < 200 || status >= 300) {
      const trimmed = text.length > 500 ? `${text.slice(0, 500)}…` : text;
      const retryable = status === 408 || status === 429 || status >= 500;
      throw new DestinationError(`webhook answered HTTP ${status}: ${trimmed}`, { retryable, status });
    }
    return { status, bytes: request.bytes, durationMs: performance.now() - started };
  }
}
