import { and, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/index.ts";
import { badInput, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { getEndpointOrFail } from "../endpoints/service.ts";
import { endpoints } from "../endpoints/tables.ts";
import * as store from "./store.ts";

export const DEFAULT_RETENTION_DAYS = 7;

/** An endpoint named by its exId (as the spec's calls do) or by its id. */
async function endpointByKey(db: Db, accountId: string, key: string) {
  if (isUuid(key)) return getEndpointOrFail(db, accountId, key);
  const [row] = await db
    .select()
    .from(endpoints)
    .where(and(eq(endpoints.accountId, accountId), eq(endpoints.exId, key)));
  if (!row) throw notFound("The endpoint");
  return row;
}

interface Cursor {
  at: Date;
  id: number;
}

const encodeCursor = (c: Cursor) => `${c.at.toISOString()}_${c.id}`;

function decodeCursor(text: string): Cursor {
  const m = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_(\d+)$/.exec(text);
  if (!m || Number.isNaN(Date.parse(m[1])))
    throw badInput([{ pointer: "/nextAt", message: "This cursor is not valid." }]);
  return { at: new Date(m[1]), id: Number(m[2]) };
}

export async function listErrorLogs(
  db: Db,
  accountId: string,
  args: { endpointExId: string; from: Date; to: Date; limit: number; nextAt?: string | null },
) {
  if (args.to < args.from) throw badInput([{ pointer: "/to", message: "The end is before the start." }]);
  const endpoint = await endpointByKey(db, accountId, args.endpointExId);
  const before = args.nextAt ? decodeCursor(args.nextAt) : null;
  const rows = await store.listLogs(
    db,
    accountId,
    endpoint.id,
    { from: args.from, to: args.to },
    args.limit + 1,
    before,
  );
  const page = rows.slice(0, args.limit);
  const last = page.at(-1);
  return { logs: page, nextAt: rows.length > args.limit && last ? encodeCursor({ at: last.at, id: last.id }) : null };
}

export async function errorLogDetails(db: Db, accountId: string, endpointKey: string, requestId: string) {
  const endpoint = await endpointByKey(db, accountId, endpointKey);
  const row = await store.getLog(db, accountId, endpoint.id, requestId);
  if (!row) throw notFound("The error log");
  return row;
}

export async function pruneErrorLogs(db: Db, retentionDays = DEFAULT_RETENTION_DAYS, now = new Date()) {
  return store.pruneOlderThan(db, new Date(now.getTime() - retentionDays * 86_400_000));
}
