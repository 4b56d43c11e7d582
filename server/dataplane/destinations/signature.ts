import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Webhook request signatures (also in docs/webhook-signatures.md).
 *
 * Every request to a WEBHOOK destination that has a security token carries three headers:
 *   x-qn-nonce:     a fresh random value (32 hex characters)
 *   x-qn-timestamp: the send time in Unix seconds
 *   x-qn-signature: hex( HMAC-SHA256( key = security token, message = nonce + timestamp + body ) )
 * where `+` is plain string concatenation and `body` is the request body *before* compression (when
 * the request has `content-encoding: gzip`, gunzip it first). A receiver recomputes the HMAC with its
 * copy of the token, compares in constant time, and rejects timestamps too far from its clock (for
 * example more than 5 minutes) and nonces it has already seen, to stop replays.
 */
export const SIGNATURE_HEADER = "x-qn-signature";
export const NONCE_HEADER = "x-qn-nonce";
export const TIMESTAMP_HEADER = "x-qn-timestamp";

const NONCES_PER_DRAW = 256;
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;

/** A fresh random nonce: random bytes are drawn 256 nonces at a time (one draw per request showed in profiles). */
function freshNonce(): string {
  if (nonceOffset >= noncePool.length) {
    noncePool = randomBytes(16 * NONCES_PER_DRAW);
    nonceOffset = 0;
  }
  nonceOffset += 16;
  return noncePool.toString("hex", nonceOffset - 16, nonceOffset);
}

export function signPayload(
  securityToken: string,
  body: string | Buffer,
  nonce = freshNonce(),
  timestamp = Math.floor(Date.now() / 1000).toString(),
): { nonce: string; timestamp: string; signature: string } {
  const signature = createHmac("sha256", securityToken).update(nonce).update(timestamp).update(body).digest("hex");
  return { nonce, timestamp, signature };
}

/** The receiver's side of the recipe. */
export function verifySignature(
  securityToken: string,
  body: string | Buffer,
  headers: { nonce: string; timestamp: string; signature: string },
  options: { maxSkewSec?: number; nowSec?: number } = {},
): boolean {
  const now = options.nowSec ?? Math.floor(Date.now() / 1000);
  const ts = Number(headers.timestamp);
  if (!Number.isFinite(ts) || Math.abs(now - ts) > (options.maxSkewSec ?? 300)) return false;
  const expected = Buffer.from(signPayload(securityToken, body, headers.nonce, headers.timestamp).signature, "hex");
  const given = Buffer.from(headers.signature, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
