// Idempotency-Keys kept 24 hours, on the clock the store is given (no sleeps): a key reused within the
// day answers the first request, after it is a new request; the housekeeping sweep drops expired rows of
// accounts that send nothing more, in bounded statements, and keeps the day's. The days are in 2099: the
// service's own sweep, on the real clock, never finds these rows expired.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimKey, IDEMPOTENCY_KEPT_MS, keepAnswer, sweepExpiredKeys } from "../../server/domains/idempotency/store.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { signUp, useTestApp } from "../support/api.ts";

const ctx = useTestApp();
let db: Db;

beforeAll(() => {
  db = openDatabase(ctx.app.database.url, 2);
});
afterAll(async () => {
  await db?.$client.end();
});

const at = (start: Date, ms: number) => new Date(start.getTime() + ms);
const keysOf = async (accountId: string) =>
  (await db.$client.query("select key from idempotency_keys where account_id = $1 order by key", [accountId])).rows.map(
    (r) => r.key as string,
  );

describe("an Idempotency-Key's day", () => {
  it("answers the first request until 24 hours have passed, then is a new request", async () => {
    const { viewer } = await signUp(ctx.app);
    const start = new Date("2099-03-01T12:00:00.000Z");
    expect(await claimKey(db, viewer.id, "k", "hash-1", start)).toBe(true);
    await keepAnswer(db, viewer.id, "k", 201, '{"id":"first"}');
    const justBefore = await claimKey(db, viewer.id, "k", "hash-1", at(start, IDEMPOTENCY_KEPT_MS - 1));
    expect(justBefore).toMatchObject({ requestHash: "hash-1", status: 201, body: '{"id":"first"}' });
    // Another body within the day still finds the first request's row (the route refuses it).
    expect(await claimKey(db, viewer.id, "k", "hash-2", at(start, 60_000))).toMatchObject({ requestHash: "hash-1" });
    const after = at(start, IDEMPOTENCY_KEPT_MS + 1);
    expect(await claimKey(db, viewer.id, "k", "hash-2", after)).toBe(true);
    // The new request owns the key for a day of its own: running, then its answer.
    expect(await claimKey(db, viewer.id, "k", "hash-2", at(after, 1000))).toMatchObject({
      requestHash: "hash-2",
      status: null,
      body: null,
    });
  });

  it("sweeps expired keys of idle accounts in bounded statements and keeps the day's", async () => {
    const idle = await signUp(ctx.app);
    const busy = await signUp(ctx.app);
    const start = new Date("2099-03-02T00:00:00.000Z");
    for (let i = 0; i < 5; i++) await claimKey(db, idle.viewer.id, `old-${i}`, "h", at(start, i));
    await claimKey(db, busy.viewer.id, "old", "h", start);
    const later = at(start, IDEMPOTENCY_KEPT_MS - 1);
    await claimKey(db, idle.viewer.id, "young", "h", later);
    const now = at(start, IDEMPOTENCY_KEPT_MS + 10);
    // Expired rows of other tests' accounts (none are older than these) may go in the same statements.
    let swept = 0;
    for (let batch = await sweepExpiredKeys(db, now, 2); batch > 0; batch = await sweepExpiredKeys(db, now, 2)) {
      expect(batch).toBeLessThanOrEqual(2);
      swept += batch;
    }
    expect(swept).toBeGreaterThanOrEqual(6);
    expect(await keysOf(idle.viewer.id)).toEqual(["young"]);
    expect(await keysOf(busy.viewer.id)).toEqual([]);
  });
});
