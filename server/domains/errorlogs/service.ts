import type { Db } from "../../platform/db/index.ts";
import { badInput, foundOr } from "../../platform/errors.ts";
import { connection, cursorArgument } from "../../platform/paging.ts";
import { endpointByKey } from "../endpoints/service.ts";
import * as store from "./store.ts";

/** Bodies kept per log: enough to see the call and the error, bounded so a large batch cannot bloat the table. */
export const BODY_LIMIT = 16 * 1024;
export const DEFAULT_RETENTION_DAYS = 7;

/** Tokens in endpoint URLs (/rpc/<exId>/<token>) become ****; query strings are dropped. */
export function maskUrl(url: string): string {
  const path = url.split(/[?#]/)[0];
  return path.replace(/^(\/rpc\/[^/]+)\/[^/]+/, "$1/****");
}

/** A body as stored: text, cut to BODY_LIMIT bytes with a note saying so. */
export function capBody(body: Buffer | string | null | undefined): string | null {
  if (body === null || body === undefined) return null;
  const buffer = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  if (buffer.length <= BODY_LIMIT) return buffer.toString("utf8");
  return `${buffer.subarray(0, BODY_LIMIT).toString("utf8")}… [${buffer.length - BODY_LIMIT} more bytes not kept]`;
}

export async function listErrorLogs(
  db: Db,
  accountId: string,
  args: { endpointExId: string; from: Date; to: Date; limit: number; nextAt?: string | null },
) {
  if (args.to < args.from) throw badInput([{ pointer: "/to", message: "The end is before the start." }]);
  const before = cursorArgument(args.nextAt, store.errorLogCursorShape, "nextAt");
  const endpoint = await endpointByKey(db, accountId, args.endpointExId);
  const rows = await store.listLogs(
    db,
    accountId,
    endpoint.id,
    { from: args.from, to: args.to },
    args.limit + 1,
    before,
  );
  return connection(rows, args.limit, store.errorLogCursorOf);
}

export async function errorLogDetails(db: Db, accountId: string, endpointKey: string, requestId: string) {
  const endpoint = await endpointByKey(db, accountId, endpointKey);
  return foundOr(await store.getLog(db, accountId, endpoint.id, requestId), "The error log");
}

export async function pruneErrorLogs(db: Db, retentionDays = DEFAULT_RETENTION_DAYS, now = new Date()) {
  return store.pruneOlderThan(db, new Date(now.getTime() - retentionDays * 86_400_000));
}
