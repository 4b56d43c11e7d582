/**
 * Compression of the API's larger answers (the console's registry is some 200 kB of JSON, about a tenth
 * of that compressed): brotli or gzip, whichever the client accepts, as an `onSend` step. Static files
 * are compressed at build instead (vite.config.ts).
 */
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { FastifyReply, FastifyRequest } from "fastify";

/** The encodings answers are compressed with. */
export type AnswerEncoding = "br" | "gzip";

/**
 * Compressed copies of an answer sent again and again (the response cache's kept answers): each
 * encoding is compressed once, not on every send.
 */
export interface CompressedCopies {
  /** The answer the copies are of: they are used only when this is the payload sent. */
  readonly body: Buffer;
  compressed(encoding: AnswerEncoding): Buffer | undefined;
  keepCompressed(encoding: AnswerEncoding, copy: Buffer): void;
}

/** Smaller answers go as they are: compressing them saves less than it costs. */
const MIN_BYTES = 1024;
const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** The encodings the client accepts (`accept-encoding`, without those it refuses with q=0). */
function acceptedEncodings(header: string | undefined): Set<string> {
  const accepted = new Set<string>();
  for (const part of (header ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const refused = params.some((param) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(param));
    if (name && !refused) accepted.add(name);
  }
  return accepted;
}

function compress(encoding: AnswerEncoding, payload: string | Buffer): Promise<Buffer> {
  return encoding === "br"
    ? brotli(payload, {
        // Quality 5: close to the best ratio for JSON at a few milliseconds for the registry.
        params: {
          [constants.BROTLI_PARAM_QUALITY]: 5,
          [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(payload),
        },
      })
    : gzipAsync(payload, { level: 6 });
}

/**
 * Whether the payload is shorter than `bytes` in UTF-8. A text's UTF-8 is at least as many bytes as it has
 * UTF-16 units, so a long text needs no measuring (measuring a 14 KB answer cost more than its lookup).
 */
function byteLengthBelow(payload: string | Buffer, bytes: number): boolean {
  if (typeof payload !== "string") return payload.byteLength < bytes;
  return payload.length < bytes && Buffer.byteLength(payload) < bytes;
}

/** The answer as the client accepts it; `copies`, when they are of this payload, are used and filled. */
export async function compressAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  copies?: CompressedCopies | null,
) {
  if (typeof payload !== "string" && !Buffer.isBuffer(payload)) return payload;
  if (reply.hasHeader("content-encoding") || byteLengthBelow(payload, MIN_BYTES)) return payload;
  const accepted = acceptedEncodings(request.headers["accept-encoding"]);
  const encoding = accepted.has("br") ? "br" : accepted.has("gzip") ? "gzip" : null;
  reply.header("vary", "accept-encoding");
  if (!encoding) return payload;
  const kept = copies?.body === payload ? copies : null;
  let body = kept?.compressed(encoding);
  if (!body) {
    body = await compress(encoding, payload);
    kept?.keepCompressed(encoding, body);
  }
  reply.header("content-encoding", encoding);
  reply.removeHeader("content-length");
  return body;
}
