import type { Db, Executor } from "../../platform/db/index.ts";
import { currentBillingPeriod } from "../account/billing-period.ts";
import { checkWriteAllowance, limitsOf, MAX_UPLOAD_BYTES, writeCharge, writeOperations } from "./limits.ts";
import * as store from "./store.ts";

/**
 * Metering and billing of the writes filters and functions make through the helpers (reads are free):
 * counted in write operations per account and minute (kv_write_minutes), priced by the plan (limits.ts).
 */

export interface TimeWindow {
  start: Date;
  end: Date;
}

async function currentPeriod(db: Executor, accountId: string, now: Date): Promise<TimeWindow> {
  return currentBillingPeriod(db, accountId, now);
}

/**
 * Meters one helper call that wrote, inside the write's transaction. On a plan with no price past its
 * included writes, the call that goes past them is refused (CONFLICT) and, with it, its write.
 */
export async function meterHelperWrite(tx: Executor, accountId: string, changed: number, now: Date) {
  await store.meterHelperWrite(tx, accountId, writeOperations(changed), now);
  const limits = await limitsOf(tx, accountId);
  if (limits.centsPerMillionWrites !== null) return;
  const period = await currentPeriod(tx, accountId, now);
  checkWriteAllowance(limits, (await store.helperWrites(tx, accountId, period.start, period.end)).operations);
}

/**
 * The account's helper writes in `window` (totals and points per `tick`), and the bill of `period`: its
 * operations against the plan's included ones and what those past them cost.
 */
export async function writeUsage(
  db: Db,
  accountId: string,
  args: { window: TimeWindow; period: TimeWindow; tick: "hour" | "day" },
) {
  const { window, period, tick } = args;
  const [inWindow, points, inPeriod, limits] = await Promise.all([
    store.helperWrites(db, accountId, window.start, window.end),
    store.helperWriteTicks(db, accountId, window.start, window.end, tick),
    store.helperWrites(db, accountId, period.start, period.end),
    limitsOf(db, accountId),
  ]);
  const charge = writeCharge(limits, inPeriod.operations);
  return {
    startTime: window.start,
    endTime: window.end,
    calls: inWindow.calls,
    operations: inWindow.operations,
    points: points.map((p) => ({ x: p.at, calls: p.calls, operations: p.operations })),
    periodStart: period.start,
    periodEnd: period.end,
    periodOperations: inPeriod.operations,
    includedOperations: charge.included,
    overageOperations: charge.overage,
    pricePerMillion: charge.pricePerMillion,
    overageCost: charge.cost,
  };
}

/** The key-value store at a glance: keys against the plan, and this billing period's writes per day. */
export async function overview(db: Db, accountId: string, now = new Date()) {
  const period = await currentPeriod(db, accountId, now);
  const [keys, lists, addressBooks, limits, writes, openUploads] = await Promise.all([
    store.countKeys(db, accountId),
    store.countCollections(db, accountId, "LIST", null),
    store.countCollections(db, accountId, "SET", null),
    limitsOf(db, accountId),
    writeUsage(db, accountId, { window: period, period, tick: "day" }),
    store.countOpenUploads(db, accountId, now),
  ]);
  return {
    keys,
    keyLimit: limits.keys,
    lists,
    addressBooks,
    values: keys - lists - addressBooks,
    itemsPerKeyLimit: limits.itemsPerKey,
    valueBytesLimit: limits.valueBytes,
    openUploads,
    openUploadLimit: limits.openUploads,
    uploadBytesLimit: MAX_UPLOAD_BYTES,
    writes,
  };
}
