import { gzipSync } from "node:zlib";
import { parquetWriteBuffer } from "hyparquet-writer";
import { EgressRefused } from "../../platform/egress.ts";
import { decodePercent } from "../../platform/text.ts";
import {
  type Compression,
  type DeliveryBatch,
  type DestinationAttributes,
  type DestinationContext,
  DestinationError,
  type FileType,
  SECRET_ATTRIBUTES,
} from "./types.ts";

/**
 * BZIP2: there is no maintained bzip2 *encoder* on npm (the ones listed are decoders, or unmaintained
 * pure-JS ports last published years ago), so BZIP2 is refused with this message rather than faked.
 */
export const BZIP2_UNSUPPORTED =
  "BZIP2 compression is not supported: no maintained bzip2 encoder is available to this service; choose GZIP or NONE";

export function assertCompression(c: Compression | undefined): Compression {
  const value = c ?? "NONE";
  if (value === "BZIP2") throw new DestinationError(BZIP2_UNSUPPORTED, { retryable: false });
  if (value !== "NONE" && value !== "GZIP") {
    throw new DestinationError(`unknown compression ${String(value)}`, { retryable: false });
  }
  return value;
}

/** The secret values of a destination, to be cut out of any message that leaves it. */
export function secretsOf(attrs: DestinationAttributes): string[] {
  const values: string[] = [];
  for (const k of SECRET_ATTRIBUTES) {
    const v = (attrs as unknown as Record<string, unknown>)[k];
    if (typeof v === "string" && v.length > 0) {
      values.push(v);
      // SAS tokens and URL-embedded secrets also appear percent-encoded or without their "?".
      values.push(encodeURIComponent(v));
      if (v.startsWith("?")) values.push(v.slice(1));
      for (const part of v.replace(/^\?/, "").split("&")) {
        const [, value] = part.split("=");
        if (value && value.length >= 8) values.push(value, decodePercent(value));
      }
    }
  }
  return [...new Set(values)].filter((v) => v.length >= 4).sort((a, b) => b.length - a.length);
}

/** Removes secrets and URL credentials from a message. */
export function redact(message: string, secrets: string[]): string {
  let out = message;
  for (const s of secrets) out = out.split(s).join("***");
  return out.replace(/\/\/[^/\s:@]+:[^/\s@]+@/g, "//***:***@");
}

export function errorMessage(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) {
    return e.errors.map((x) => (x instanceof Error ? x.message : String(x))).join("; ");
  }
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return e.message || (typeof code === "string" ? code : e.name);
  }
  return String(e);
}

/**
 * Whether the egress policy refused the connection behind `e` (SDKs wrap the socket's error, keeping its
 * code or cause). A refusal does not get better by retrying: the operator's allow list must change.
 */
export function isEgressRefusal(e: unknown): boolean {
  for (let error = e, depth = 0; error instanceof Error && depth < 5; error = error.cause, depth++) {
    if (error instanceof EgressRefused || (error as { code?: unknown }).code === "EGRESS_REFUSED") return true;
  }
  return false;
}

export function batchMetadata(ctx: DestinationContext, batch: DeliveryBatch) {
  return {
    stream_id: ctx.streamId,
    network: ctx.network,
    dataset: ctx.dataset,
    batch_start_range: batch.startBlock,
    batch_end_range: batch.endBlock,
    data_size_bytes: Buffer.byteLength(batch.payloadJson),
    is_reorg: batch.isReorg ?? false,
  };
}

/** Object name for a batch: zero-padded so names sort by block. */
export function objectName(prefix: string | undefined, batch: DeliveryBatch, fileType: FileType, c: Compression) {
  const pad = (n: number) => String(n).padStart(12, "0");
  const ext = fileType === "PARQUET" ? "parquet" : c === "GZIP" ? "json.gz" : "json";
  return `${prefix ?? ""}${pad(batch.startBlock)}-${pad(batch.endBlock)}${batch.isReorg ? "-reorg" : ""}.${ext}`;
}

/**
 * The bytes of one object. JSON: the payload (GZIP compresses the whole file). PARQUET: one row per
 * element when the payload is an array (else one row), columns network, dataset, batch_start,
 * batch_end, data (JSON text); GZIP selects the Parquet page codec instead of wrapping the file.
 */
const gzipPage = (input: Uint8Array) => new Uint8Array(gzipSync(input));

export function encodeObject(
  ctx: DestinationContext,
  batch: DeliveryBatch,
  fileType: FileType,
  compression: Compression,
): { body: Buffer; contentType: string; contentEncoding?: string } {
  if (fileType === "PARQUET") {
    const payload = JSON.parse(batch.payloadJson) as unknown;
    const rows = Array.isArray(payload) ? payload : [payload];
    const n = rows.length;
    const buf = parquetWriteBuffer({
      columnData: [
        { name: "network", data: Array(n).fill(ctx.network), type: "STRING" },
        { name: "dataset", data: Array(n).fill(ctx.dataset), type: "STRING" },
        { name: "batch_start", data: Array(n).fill(BigInt(batch.startBlock)), type: "INT64" },
        { name: "batch_end", data: Array(n).fill(BigInt(batch.endBlock)), type: "INT64" },
        { name: "data", data: rows.map((r) => JSON.stringify(r)), type: "JSON" },
      ],
      codec: compression === "GZIP" ? "GZIP" : "UNCOMPRESSED",
      compressors: { GZIP: gzipPage },
    });
    return { body: Buffer.from(buf), contentType: "application/vnd.apache.parquet" };
  }
  if (fileType !== "JSON") throw new DestinationError(`unknown file type ${String(fileType)}`, { retryable: false });
  const raw = Buffer.from(batch.payloadJson);
  if (compression === "GZIP") return { body: gzipSync(raw), contentType: "application/json", contentEncoding: "gzip" };
  return { body: raw, contentType: "application/json" };
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; durationMs: number }> {
  const t = performance.now();
  const value = await fn();
  return { value, durationMs: performance.now() - t };
}
