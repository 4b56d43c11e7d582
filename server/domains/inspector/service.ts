import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import {
  NONCE_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifySignature,
} from "../../dataplane/destinations/signature.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { conflict, foundOr } from "../../platform/errors.ts";
import * as store from "./store.ts";

/**
 * The request inspector: inspection URLs an account creates, served by this service at
 * /inspect/<token>, each keeping the requests it receives within the bounds below (chosen in
 * docs/decisions/1100-request-inspector-bounds.md). A stream or webhook pointed at one is delivered to
 * through the real delivery path; the egress policy allows exactly this route on the service's own
 * origins (app.ts).
 */
export const INSPECTOR_BOUNDS = {
  /** Inspection URLs per account. */
  urlsPerAccount: 10,
  /** Requests kept per inspection URL, the oldest dropped first. */
  requestsPerUrl: 100,
  /** How long a request is kept. */
  keepForMs: 24 * 60 * 60_000,
  /** Bytes of a body accepted on the wire; a larger request is answered 413 and not kept. */
  wireBytes: 1024 * 1024,
  /** Bytes a compressed body may grow to when it is decompressed (to check its signature). */
  decodedBytes: 8 * 1024 * 1024,
  /** Bytes of a (decompressed) body kept and shown. */
  keptBodyBytes: 256 * 1024,
} as const;

/** The path of an inspection URL: /inspect/ and 32 hex digits (no character a LIKE pattern reads). */
export const INSPECT_PATH = /^\/inspect\/[0-9a-f]{32}$/;
export const INSPECT_PREFIX = "/inspect/";

/** The signing secrets of the account's destinations whose URL ends with `path`: a port the streams domain fills. */
export type DestinationSigningSecrets = (db: Executor, accountId: string, path: string) => Promise<string[]>;

export type SignatureCheck = "VERIFIED" | "MISMATCH" | "UNSIGNED" | "NO_SECRET";

const keptSince = (now = Date.now()) => new Date(now - INSPECTOR_BOUNDS.keepForMs);

export function listInspectionUrls(db: Db, accountId: string) {
  return store.listInspectionUrls(db, accountId);
}

export async function ownedInspectionUrl(db: Executor, accountId: string, id: string) {
  return foundOr(await store.getInspectionUrl(db, accountId, id), "Inspection URL");
}

export async function createInspectionUrl(
  db: Db,
  accountId: string,
  input: { name?: string | null; answerStatus?: number | null },
) {
  return db.transaction(async (tx) => {
    // Serializes creations of one account, so two at once cannot pass the count together.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('inspection_urls:' || ${accountId}))`);
    const existing = await store.countInspectionUrls(tx, accountId);
    if (existing >= INSPECTOR_BOUNDS.urlsPerAccount)
      throw conflict(
        `An account has at most ${INSPECTOR_BOUNDS.urlsPerAccount} inspection URLs; delete one you no longer use.`,
      );
    return store.insertInspectionUrl(tx, accountId, {
      name: input.name?.trim() || `Inspector ${existing + 1}`,
      token: randomBytes(16).toString("hex"),
      answerStatus: input.answerStatus ?? 200,
    });
  });
}

export async function deleteInspectionUrl(db: Db, accountId: string, id: string) {
  const row = await ownedInspectionUrl(db, accountId, id);
  await store.deleteInspectionUrl(db, accountId, id);
  return row;
}

/** The requests the account's inspection URL received and still keeps, newest first. */
export async function inspectedRequests(db: Db, accountId: string, id: string) {
  await ownedInspectionUrl(db, accountId, id);
  return store.listRequests(db, accountId, id, keptSince(), INSPECTOR_BOUNDS.requestsPerUrl);
}

/** One request the account's inspection URL keeps, or NOT_FOUND (a request id is a whole number). */
export async function inspectedRequest(db: Db, accountId: string, id: string, requestId: string) {
  await ownedInspectionUrl(db, accountId, id);
  const row = /^\d{1,15}$/.test(requestId)
    ? await store.getRequest(db, accountId, id, Number(requestId), keptSince())
    : undefined;
  return foundOr(row, "Request");
}

export async function clearInspectedRequests(db: Db, accountId: string, id: string) {
  await ownedInspectionUrl(db, accountId, id);
  return store.clearRequests(db, accountId, id);
}

/** How many requests each of the account's inspection URLs keeps. */
export function keptCounts(db: Db, accountId: string, ids: string[]) {
  return store.requestCounts(db, accountId, ids, keptSince());
}

/** Housekeeping: requests past the kept time go, for URLs that receive nothing more too. */
export function pruneInspectedRequests(db: Db) {
  return store.pruneRequestsBefore(db, keptSince());
}

export interface ReceivedRequest {
  method: string;
  /** Header names and values in order, as node's rawHeaders pairs them. */
  rawHeaders: string[];
  /** The body as received (empty when there was none). */
  body: Buffer;
}

/** The body with its content-encoding undone, or null when it cannot be (unknown, corrupt or too large). */
function decodedBody(body: Buffer, encoding: string | undefined): Buffer | null {
  const coding = (encoding ?? "").trim().toLowerCase();
  if (coding === "" || coding === "identity") return body;
  if (coding !== "gzip") return null;
  try {
    return gunzipSync(body, { maxOutputLength: INSPECTOR_BOUNDS.decodedBytes });
  } catch {
    return null;
  }
}

/** The body as kept: text, cut at keptBodyBytes, NUL shown as U+FFFD (PostgreSQL text holds none). */
function keptText(body: Buffer): { text: string; truncated: boolean } {
  const truncated = body.length > INSPECTOR_BOUNDS.keptBodyBytes;
  const text = body.subarray(0, INSPECTOR_BOUNDS.keptBodyBytes).toString("utf8").replaceAll("\u0000", "\uFFFD");
  return { text, truncated };
}

function headerOf(pairs: [string, string][], name: string): string | undefined {
  return pairs.find(([n]) => n.toLowerCase() === name)?.[1];
}

/**
 * A request to /inspect/<token>: kept for the URL's account with whether its signature verified
 * against the signing secret of a destination pointed at this URL. Answers the status to reply with,
 * or null when no inspection URL has this token.
 */
export async function receiveRequest(
  db: Db,
  signingSecrets: DestinationSigningSecrets,
  token: string,
  request: ReceivedRequest,
): Promise<number | null> {
  const target = await store.inspectionUrlByToken(db, token);
  if (!target) return null;
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2)
    headers.push([request.rawHeaders[i], request.rawHeaders[i + 1]]);
  const decoded = decodedBody(request.body, headerOf(headers, "content-encoding"));
  const signature = await signatureCheck(db, signingSecrets, target.accountId, token, headers, decoded);
  // A body that cannot be decompressed (another encoding, corrupt, too large) is shown as it arrived.
  const kept = keptText(decoded ?? request.body);
  await store.recordRequest(
    db,
    target.accountId,
    target.id,
    {
      method: request.method,
      headers,
      body: kept.text,
      bodyTruncated: kept.truncated,
      size: request.body.length,
      signature,
    },
    { keep: INSPECTOR_BOUNDS.requestsPerUrl, since: keptSince() },
  );
  return target.answerStatus;
}

async function signatureCheck(
  db: Db,
  signingSecrets: DestinationSigningSecrets,
  accountId: string,
  token: string,
  headers: [string, string][],
  body: Buffer | null,
): Promise<SignatureCheck> {
  const signature = headerOf(headers, SIGNATURE_HEADER);
  const nonce = headerOf(headers, NONCE_HEADER);
  const timestamp = headerOf(headers, TIMESTAMP_HEADER);
  if (!signature || !nonce || !timestamp) return "UNSIGNED";
  const secrets = await signingSecrets(db, accountId, `${INSPECT_PREFIX}${token}`);
  if (secrets.length === 0) return "NO_SECRET";
  if (!body) return "MISMATCH";
  return secrets.some((secret) => verifySignature(secret, body, { nonce, timestamp, signature }))
    ? "VERIFIED"
    : "MISMATCH";
}
