import type { Db } from "../../platform/db/index.ts";
import { badInput, foundOr } from "../../platform/errors.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import { endpointByKey } from "../endpoints/service.ts";
import * as store from "./store.ts";

export const DEFAULT_RETENTION_DAYS = 7;

export async function listErrorLogs(
  db: Db,
  accountId: string,
  args: { endpointExId: string; from: Date; to: Date; limit: number; nextAt?: string | null },
) {
  if (args.to < args.from) throw badInput([{ pointer: "/to", message: "The end is before the start." }]);
  const size = pageSize(args.limit, { argument: "limit" });
  const before = cursorArgument(args.nextAt, store.errorLogCursorShape, "nextAt");
  const endpoint = await endpointByKey(db, accountId, args.endpointExId);
  const rows = await store.listLogs(db, accountId, endpoint.id, { from: args.from, to: args.to }, size + 1, before);
  return connection(rows, size, store.errorLogCursorOf);
}

export async function errorLogDetails(db: Db, accountId: string, endpointKey: string, requestId: string) {
  const endpoint = await endpointByKey(db, accountId, endpointKey);
  return foundOr(await store.getLog(db, accountId, endpoint.id, requestId), "The error log");
}

/** Records calls the proxy failed (the meter's sink). */
export async function recordFailedCalls(db: Db, rows: Parameters<typeof store.insertLogs>[1]): Promise<void> {
  await store.insertLogs(db, rows);
}

export async function pruneErrorLogs(db: Db, retentionDays = DEFAULT_RETENTION_DAYS, now = new Date()) {
  return store.pruneOlderThan(db, new Date(now.getTime() - retentionDays * 86_400_000));
}
