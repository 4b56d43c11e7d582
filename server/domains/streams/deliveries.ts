import type { Db } from "../../platform/db/index.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import { ownedStream } from "./service.ts";
import * as store from "./store.ts";

/**
 * The delivery history of streams and webhooks: what the engine recorded of each attempt
 * (dataplane/engine/deliveries.ts), kept for the days the account's plan sets (plans.json
 * `deliveryHistoryDays`: 3 on Free up to 60 on Business) and pruned by the engine every ten minutes.
 */

/** Days kept for an account whose plan says nothing (a plan row from before the column). */
export const DEFAULT_DELIVERY_HISTORY_DAYS = 7;

/** A stream's (or webhook's) delivery history, newest first, after checking the account owns it. */
export async function listDeliveries(
  db: Db,
  accountId: string,
  id: string,
  product: store.Product,
  args: { first?: number | null; after?: string | null; outcomes?: string[] | null; search?: string | null },
) {
  const after = cursorArgument(args.after, store.deliveryCursorShape);
  const size = pageSize(args.first, { fallback: 50 });
  await ownedStream(db, accountId, id, product);
  const [rows, days] = await Promise.all([
    store.deliveries(db, accountId, id, { limit: size + 1, after, outcomes: args.outcomes, search: args.search }),
    store.deliveryHistoryDays(db, accountId),
  ]);
  return { ...connection(rows, size, store.deliveryCursorOf), retentionDays: days ?? DEFAULT_DELIVERY_HISTORY_DAYS };
}

/** Removes history older than each account's plan keeps it; the number of rows removed. */
export const pruneDeliveries = (db: Db, now = new Date()) =>
  store.pruneDeliveries(db, DEFAULT_DELIVERY_HISTORY_DAYS, now);

/** How many failing streams (or webhooks) the dashboard names. */
export const FAILING_SHOWN = 20;

/** The account's streams (or webhooks) the engine stopped because they failed, most recent first. */
export const failingStreams = (db: Db, accountId: string, product: store.Product) =>
  store.failingStreams(db, accountId, product, FAILING_SHOWN);
